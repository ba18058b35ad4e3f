// Deterministic, seeded data shared by both servers, so every transport answers
// with the same books. Book i is a pure function of i: nothing is stored, and
// allBooks(500000) costs only the time to build the objects it returns.
import { LIMITS } from '../../common/defaults.js';

export const AUTHOR_COUNT = 1000;
export const BOOK_COUNT = LIMITS.MAX_BOOKS;

const FIRST = [
  'Ada',
  'Alan',
  'Barbara',
  'Claude',
  'Donald',
  'Edsger',
  'Frances',
  'Grace',
  'John',
  'Katherine',
  'Leslie',
  'Margaret',
  'Niklaus',
  'Radia',
  'Tony',
  'Vint',
];
const LAST = [
  'Lovelace',
  'Turing',
  'Liskov',
  'Shannon',
  'Knuth',
  'Dijkstra',
  'Allen',
  'Hopper',
  'Backus',
  'Johnson',
  'Lamport',
  'Hamilton',
  'Wirth',
  'Perlman',
  'Hoare',
  'Cerf',
];
const WORDS = [
  'Silent',
  'Quantum',
  'Distant',
  'Hidden',
  'Broken',
  'Golden',
  'Last',
  'Secret',
  'Electric',
  'Patient',
  'River',
  'Garden',
  'Signal',
  'Protocol',
  'Engine',
  'Harbor',
  'Winter',
  'Circuit',
  'Archive',
  'Compass',
];

// mulberry32: a tiny seeded PRNG, so field values look varied but never change.
function rand(seed) {
  let t = (seed + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (list, seed) => list[Math.floor(rand(seed) * list.length)];

export function authorAt(i) {
  return {
    id: `author-${i}`,
    firstName: pick(FIRST, i * 3 + 1),
    lastName: pick(LAST, i * 3 + 2),
  };
}

export function bookAt(i) {
  return {
    id: `book-${i}`,
    name: `${pick(WORDS, i * 5 + 1)} ${pick(WORDS, i * 5 + 2)} ${i}`,
    pageCount: 50 + Math.floor(rand(i * 5 + 3) * 950),
    authorIndex: 1 + ((i * 7919) % AUTHOR_COUNT),
  };
}

// A book as every transport shows it: author resolved.
export function fullBookAt(i) {
  const { authorIndex, ...book } = bookAt(i);
  return { ...book, author: authorAt(authorIndex) };
}

// "book-42" -> 42; null when the id names no book.
export function bookIndex(id) {
  const m = /^book-(\d{1,7})$/.exec(String(id));
  if (!m) return null;
  const i = Number(m[1]);
  return i >= 1 && i <= BOOK_COUNT ? i : null;
}

export function authorIndex(id) {
  const m = /^author-(\d{1,5})$/.exec(String(id));
  if (!m) return null;
  const i = Number(m[1]);
  return i >= 1 && i <= AUTHOR_COUNT ? i : null;
}

// The first `first` books written by author a. Since 7919 and AUTHOR_COUNT are
// coprime, author a owns exactly one residue class mod AUTHOR_COUNT, so the scan
// finds `first` books within first * AUTHOR_COUNT steps.
export function booksOfAuthor(a, first) {
  const out = [];
  for (let i = 1; i <= BOOK_COUNT && out.length < first; i++) {
    if (1 + ((i * 7919) % AUTHOR_COUNT) === a) out.push(i);
  }
  return out;
}

// Deterministic filler text of exactly `size` bytes (ASCII).
const FILLER = 'The quick brown fox jumps over the lazy dog. ';
export function filler(size, seed = 0) {
  if (size <= 0) return '';
  const start = seed % FILLER.length;
  const unit = FILLER.slice(start) + FILLER.slice(0, start);
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

// Out-of-range input gets a sentence that names the bound.
export function checkCount(name, n, max) {
  if (!Number.isInteger(n) || n < 0 || n > max) {
    return `${name} must be an integer from 0 to ${max} (got ${n})`;
  }
  return null;
}
