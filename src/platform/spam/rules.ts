import RE2 from 're2';

// The built-in spam rule set (Bellows extension settings `spam_check_blocked_words`, `spam_check_blocked_link_domains`,
// `spam_check_max_links`): pure functions over the text of a record. Patterns run on RE2 (linear time, whatever the
// text), so an administrator's pattern cannot stall a request.

/** A blocked-word entry written `/.../` is an RE2 pattern (matched in any case); anything else is a whole word. */
const PATTERN = /^\/(.+)\/$/s;

/** Why an entry of `spam_check_blocked_words` cannot be used, or null. */
export function blockedWordProblem(entry: string): string | null {
  if (!entry.trim()) return "can't contain blank entries";
  const m = PATTERN.exec(entry);
  if (!m) return null;
  try {
    new RE2(m[1], 'iu');
    return null;
  } catch {
    return `contains an invalid pattern: ${entry}`;
  }
}

const escape = (s: string) => s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

function matcher(entry: string): RE2 | null {
  if (blockedWordProblem(entry)) return null;
  const m = PATTERN.exec(entry);
  if (m) return new RE2(m[1], 'iu');
  return new RE2(`(?:^|[^\\p{L}\\p{N}_])${escape(entry.trim())}(?:$|[^\\p{L}\\p{N}_])`, 'iu');
}

/** Links in a text: http(s) URLs, and bare `www.` hosts. */
const LINK = /\b(?:https?:\/\/|www\.)[^\s<>()"'`\]\[]+/gi;

function linkHost(link: string): string | null {
  try {
    return new URL(/^https?:\/\//i.test(link) ? link : `http://${link}`).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return null;
  }
}

export interface RuleSettings {
  spam_check_blocked_words: readonly string[];
  spam_check_blocked_link_domains: readonly string[];
  spam_check_max_links: number;
}

/** The first rule the text breaks, as a short reason for the log, or null when it breaks none. */
export function ruleVerdict(settings: RuleSettings, text: string): string | null {
  for (const entry of settings.spam_check_blocked_words) {
    if (matcher(entry)?.test(text)) return `blocked word ${entry}`;
  }
  const domains = settings.spam_check_blocked_link_domains.map((d) => d.toLowerCase());
  const max = settings.spam_check_max_links;
  if (!domains.length && !max) return null;
  const links = text.match(LINK) ?? [];
  if (max && links.length > max) return `${links.length} links (at most ${max})`;
  for (const link of links) {
    const host = linkHost(link);
    const hit = host && domains.find((d) => host === d || host.endsWith(`.${d}`));
    if (hit) return `link to ${hit}`;
  }
  return null;
}
