// Paths in k6, which has no path module. Plain ES module.

// '/a/b/../c/./d' -> '/a/c/d'
export function normalize(path) {
  const out = [];
  for (const part of path.split('/')) {
    if (part === '..') out.pop();
    else if (part !== '.' && part !== '') out.push(part);
  }
  return `/${out.join('/')}`;
}

// `path` as the user gave it, made absolute from the directory `cwd` (k6's __ENV.PWD);
// unchanged when it is absolute or the directory is unknown.
export const resolveFrom = (cwd, path) => (path.startsWith('/') || !cwd ? path : normalize(`${cwd}/${path}`));
