#!/usr/bin/env node
// One sticky pull-request comment with the gate's verdict and regressions (the gate's
// comment.md): created once, then updated in place on later pushes, found by its marker.
// Plain Node 20 (fetch) against the REST API, so a test can point it at a stub:
//
//   node .github/workflows/scripts/pr-comment.js results/comment.md
//
// Environment: GITHUB_TOKEN, GITHUB_REPOSITORY (owner/name), PR_NUMBER, and
// GITHUB_API_URL (the runner sets it; https://api.github.com by default).
// A token that may not write (a pull request from a fork gets a read-only one) is not a
// failure: one line says the job summary holds the gate, exit 0. Anything else that
// goes wrong is one line and exit 1.
import { readFileSync } from 'node:fs';

export const MARKER = '<!-- k6pack-gate -->';
// GitHub refuses a comment body over 65536 characters.
const MAX_BODY = 65000;

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function bodyOf(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${file} (${err.code || err.message}): run the gate first`, { cause: err });
  }
  const body = `${MARKER}\n${text.trim()}\n`;
  return body.length <= MAX_BODY
    ? body
    : `${body.slice(0, MAX_BODY)}\n\n… cut at ${MAX_BODY} characters: the job summary and the artifact have it all.\n`;
}

async function api(base, token, method, path, payload) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      accept: 'application/vnd.github+json',
      authorization: `Bearer ${token}`,
      'x-github-api-version': '2022-11-28',
      ...(payload ? { 'content-type': 'application/json' } : {}),
    },
    body: payload ? JSON.stringify(payload) : undefined,
    signal: AbortSignal.timeout(30000),
  });
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    let message = text.slice(0, 200);
    try {
      message = JSON.parse(text).message || message;
    } catch {
      // not JSON: the text as it is
    }
    throw new ApiError(res.status, `${method} ${path}: HTTP ${res.status} ${message}`.trim());
  }
  return res.status === 204 ? null : res.json();
}

// Our comment among the pull request's, page by page: -> its id, or null.
async function findComment(base, token, repo, pr) {
  for (let page = 1; page <= 30; page++) {
    const list = await api(base, token, 'GET', `/repos/${repo}/issues/${pr}/comments?per_page=100&page=${page}`);
    const ours = list.find((c) => typeof c.body === 'string' && c.body.startsWith(MARKER));
    if (ours) return ours.id;
    if (list.length < 100) return null;
  }
  return null;
}

// -> 'created' | 'updated' | 'read-only'
export async function postComment({ file, env = process.env, log = console.log }) {
  const token = env.GITHUB_TOKEN;
  const repo = env.GITHUB_REPOSITORY;
  const pr = env.PR_NUMBER;
  const base = (env.GITHUB_API_URL || 'https://api.github.com').replace(/\/$/, '');
  if (!token || !repo || !/^[\w.-]+\/[\w.-]+$/.test(repo) || !/^\d+$/.test(String(pr || '')))
    throw new Error('set GITHUB_TOKEN, GITHUB_REPOSITORY (owner/name) and PR_NUMBER (the pull request)');
  const body = bodyOf(file);
  try {
    const id = await findComment(base, token, repo, pr);
    if (id) {
      await api(base, token, 'PATCH', `/repos/${repo}/issues/comments/${id}`, { body });
      log(`k6pack gate comment updated on #${pr} (comment ${id})`);
      return 'updated';
    }
    const made = await api(base, token, 'POST', `/repos/${repo}/issues/${pr}/comments`, { body });
    log(`k6pack gate comment created on #${pr} (comment ${made.id})`);
    return 'created';
  } catch (err) {
    // A fork's token reads but cannot write: the job summary has the gate.
    if (err instanceof ApiError && (err.status === 403 || err.status === 404)) {
      log(
        `k6pack gate comment not posted (${err.message}): a token without write access; the job summary has the gate`,
      );
      return 'read-only';
    }
    throw err;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: pr-comment.js COMMENT.md');
    process.exit(2);
  }
  postComment({ file }).then(
    () => process.exit(0),
    (err) => {
      console.error(`pr-comment: ${String(err.message || err).split('\n')[0]}`);
      process.exit(1);
    },
  );
}
