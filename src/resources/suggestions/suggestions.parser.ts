import MarkdownIt from 'markdown-it';

// Suggestions as text: the fenced `suggestion` blocks of a note's Markdown, the lines of a file each one replaces,
// the file after a set of them is applied, and the commit message of an apply. No database, no git: pure functions.

/** The reference's limit on a suggestion's context: `suggestion:-100+100` at most. */
export const MAX_LINES_CONTEXT = 100;
/** Larger counts are kept as this (they are refused as too many lines anyway). */
const COUNT_CAP = 1_000_000;

const markdown = new MarkdownIt({ html: false });
const LABEL = /^suggestion(?::-(\d+)\+(\d+))?$/;

/** One fenced block labelled `suggestion` (`-0+0`) or `suggestion:-<above>+<below>`: its text and context. */
export interface SuggestionBlock {
  text: string;
  above: number;
  below: number;
}

/** The note's suggestion blocks in the order they appear, wherever they are in the Markdown (lists, quotes). */
export function suggestionBlocks(body: string): SuggestionBlock[] {
  const out: SuggestionBlock[] = [];
  for (const token of markdown.parse(body, {})) {
    if (token.type !== 'fence') continue;
    const m = LABEL.exec(token.info.trim());
    if (!m) continue;
    const count = (v: string | undefined) => Math.min(Number(v ?? 0), COUNT_CAP);
    out.push({ text: token.content.replace(/\n$/, ''), above: count(m[1]), below: count(m[2]) });
  }
  return out;
}

/** A file's lines, each with its own line ending ("\n", "\r\n", "\r" or none for a last line without one). */
export function fileLines(text: string): string[] {
  return text.match(/[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$/g) ?? [];
}

/** What a suggestion replaces: lines `fromLine`..`toLine` (1-based, inclusive) of the file. */
export interface SuggestionLines {
  fromLine: number;
  toLine: number;
  fromContent: string;
  toContent: string;
}

/** The first and last line a suggestion written on `line` with this context covers (never before line 1). */
export function suggestionRange(line: number, above: number, below: number): { fromLine: number; toLine: number } {
  return { fromLine: Math.max(1, line - above), toLine: line + below };
}

/** The text of lines `from`..`to` of a file (as many as exist). */
export function linesBetween(text: string, from: number, to: number): string {
  return fileLines(text).slice(from - 1, Math.max(from - 1, to)).join('');
}

/**
 * A block written on `line` of `file`: the lines it replaces and their replacement, which ends as the replaced
 * lines end (the block itself carries no line ending).
 */
export function suggestionLines(file: string, line: number, block: SuggestionBlock): SuggestionLines {
  const { fromLine, toLine } = suggestionRange(line, block.above, block.below);
  const fromContent = linesBetween(file, fromLine, toLine);
  const ending = fromContent.match(/(\r\n|\r|\n)$/)?.[1] ?? '';
  return { fromLine, toLine, fromContent, toContent: `${block.text}${ending}` };
}

export interface Replacement {
  fromLine: number;
  toLine: number;
  toContent: string;
}

/** Whether two of the replacements share a line. */
export function overlapping(list: readonly Replacement[]): boolean {
  const sorted = [...list].sort((a, b) => a.fromLine - b.fromLine);
  return sorted.some((r, i) => i > 0 && r.fromLine <= sorted[i - 1].toLine);
}

/** The file with every replacement made (they do not overlap). */
export function applyReplacements(file: string, list: readonly Replacement[]): string {
  const lines = fileLines(file);
  for (const r of [...list].sort((a, b) => b.fromLine - a.fromLine)) {
    lines.splice(r.fromLine - 1, r.toLine - r.fromLine + 1, r.toContent);
  }
  return lines.join('');
}

/** The reference's message when neither the request nor the project gives one. */
export const DEFAULT_COMMIT_MESSAGE = 'Apply %{suggestions_count} suggestion(s) to %{files_count} file(s)\n\n%{co_authored_by}';

export interface CommitMessageValues {
  branch_name: string;
  files_count: number;
  /** Every changed file's path (sorted and joined here). */
  file_paths: string[];
  project_name: string;
  project_path: string;
  user_full_name: string;
  username: string;
  suggestions_count: number;
  /** The suggestions' authors other than the one applying them, each once. */
  co_authors: Array<{ name: string; email: string }>;
}

/** Fills every `%{placeholder}` of the template (unknown ones stay as written); an empty result is the default message. */
export function suggestionCommitMessage(template: string | null | undefined, v: CommitMessageValues): string {
  const values: Record<string, string> = {
    branch_name: v.branch_name,
    files_count: String(v.files_count),
    file_paths: [...v.file_paths].sort().join(', '),
    project_name: v.project_name,
    project_path: v.project_path,
    user_full_name: v.user_full_name,
    username: v.username,
    suggestions_count: String(v.suggestions_count),
    co_authored_by: v.co_authors.map((a) => `Co-authored-by: ${a.name} <${a.email}>`).join('\n'),
  };
  const chosen = template && template.trim() !== '' ? template : DEFAULT_COMMIT_MESSAGE;
  return chosen.replace(/%\{(\w+)\}/g, (all, name: string) => (name in values ? values[name] : all));
}
