// Repository language shares from file names alone: enough for the project languages endpoint without
// reading blob contents. Only programming and markup languages count (prose and data files do not), as on GitLab.

const BY_EXTENSION: Record<string, string> = {
  ts: 'TypeScript', tsx: 'TypeScript', mts: 'TypeScript', cts: 'TypeScript',
  js: 'JavaScript', jsx: 'JavaScript', mjs: 'JavaScript', cjs: 'JavaScript',
  py: 'Python', pyi: 'Python',
  go: 'Go',
  rb: 'Ruby', rake: 'Ruby', gemspec: 'Ruby',
  rs: 'Rust',
  java: 'Java',
  kt: 'Kotlin', kts: 'Kotlin',
  scala: 'Scala',
  c: 'C', h: 'C',
  cc: 'C++', cpp: 'C++', cxx: 'C++', 'c++': 'C++', hh: 'C++', hpp: 'C++', hxx: 'C++',
  cs: 'C#',
  m: 'Objective-C',
  swift: 'Swift',
  php: 'PHP',
  pl: 'Perl', pm: 'Perl',
  lua: 'Lua',
  r: 'R',
  dart: 'Dart',
  ex: 'Elixir', exs: 'Elixir',
  erl: 'Erlang',
  hs: 'Haskell',
  clj: 'Clojure',
  sh: 'Shell', bash: 'Shell', zsh: 'Shell',
  ps1: 'PowerShell',
  html: 'HTML', htm: 'HTML',
  css: 'CSS',
  scss: 'SCSS',
  less: 'Less',
  vue: 'Vue',
  svelte: 'Svelte',
};

const BY_FILENAME: Record<string, string> = {
  Makefile: 'Makefile', GNUmakefile: 'Makefile', makefile: 'Makefile',
  Dockerfile: 'Dockerfile',
  Rakefile: 'Ruby', Gemfile: 'Ruby',
};

// Vendored and generated code does not describe the project (linguist's vendor list, abridged).
const VENDORED = /(?:^|\/)(?:node_modules|vendor|vendors|third[-_]?party|bower_components)\/|(?:^|\/)dist\/|\.min\.(?:js|css)$/;

export function languageOf(path: string): string | null {
  if (VENDORED.test(path)) return null;
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (BY_FILENAME[name]) return BY_FILENAME[name];
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return null;
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? null;
}

/** Percent of counted bytes per language, two decimals, largest first. */
export function languageShares(files: Iterable<{ path: string; size: number }>): Record<string, number> {
  const bytes = new Map<string, number>();
  let total = 0;
  for (const { path, size } of files) {
    const lang = languageOf(path);
    if (!lang || size <= 0) continue;
    bytes.set(lang, (bytes.get(lang) ?? 0) + size);
    total += size;
  }
  const shares = [...bytes].map(([lang, n]) => [lang, Math.round((n / total) * 10000) / 100] as const);
  shares.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return Object.fromEntries(shares.filter(([, pct]) => pct > 0));
}
