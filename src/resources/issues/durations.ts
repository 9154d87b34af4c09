// Human durations of time tracking as the reference reads and writes them (ChronicDuration with its time-tracking
// settings): a day is 8 hours, a week 5 days, a month 4 weeks (20 days); a bare number counts hours. "3h30m",
// "1w2d", "1h 30m", "90m", "1.5h", "2 hours", "-30m" (negative: subtract).

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 8 * HOUR;
const WEEK = 5 * DAY;
const MONTH = 4 * WEEK;
const YEAR = 12 * MONTH;

const UNITS: Array<[RegExp, number]> = [
  [/^(s|secs?|seconds?)$/, 1],
  [/^(m|mins?|minutes?)$/, MINUTE],
  [/^(h|hrs?|hours?)$/, HOUR],
  [/^(d|days?)$/, DAY],
  [/^(w|wks?|weeks?)$/, WEEK],
  [/^(mo|mos|months?)$/, MONTH],
  [/^(y|yrs?|years?)$/, YEAR],
];

/** Seconds, or null when the text is not a duration. Bounded: at most 64 characters. */
export function parseDuration(text: string): number | null {
  let s = text.trim().toLowerCase();
  if (!s || s.length > 64) return null;
  let sign = 1;
  if (s.startsWith('-')) { sign = -1; s = s.slice(1).trim(); }
  if (/^\d+(\.\d+)?$/.test(s)) return sign * Math.round(Number(s) * HOUR);
  const re = /(\d+(?:\.\d+)?)\s*([a-z]+)\s*,?\s*(?:and\s+)?/gy;
  let total = 0;
  let at = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s))) {
    const unit = UNITS.find(([r]) => r.test(m![2]));
    if (!unit) return null;
    total += Number(m[1]) * unit[1];
    at = re.lastIndex;
  }
  if (at !== s.length) return null;
  return sign * Math.round(total);
}

/** "1w 2d 3h 30m" (the reference's short form); null for zero. */
export function formatDuration(seconds: number): string | null {
  if (!seconds) return null;
  const sign = seconds < 0 ? '-' : '';
  let rest = Math.abs(seconds);
  const parts: string[] = [];
  for (const [unit, size] of [['mo', MONTH], ['w', WEEK], ['d', DAY], ['h', HOUR], ['m', MINUTE], ['s', 1]] as const) {
    const n = Math.floor(rest / size);
    if (n) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return sign + parts.join(' ');
}
