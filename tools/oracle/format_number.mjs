// Writes testdata/vectors/format_number.txt: f64 values with the text Node's
// String(x) gives for them, the independent oracle for twill's F64
// format_number. Deterministic: all randomness comes from a seeded
// splitmix64, so rerunning reproduces the file byte for byte.
//
//   node tools/oracle/format_number.mjs
//
// Each line is `<16 lowercase hex digits of the f64 bits> <String(x)>`.
// Node's raw output is recorded unchanged; the Rust test applies twill's
// four documented spellings (NaN -> nan, Infinity -> inf, -Infinity -> -inf,
// and "0" for negative zero -> -0).

import { writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SEED = 0x7477696c6c5f666en; // "twill_fn"
const MASK = (1n << 64n) - 1n;

let state = SEED;
function next64() {
  state = (state + 0x9e3779b97f4a7c15n) & MASK;
  let z = state;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
  return z ^ (z >> 31n);
}
// Uniform integer in [0, n) for small n; the modulo bias is irrelevant here.
const below = (n) => Number(next64() % BigInt(n));

const view = new DataView(new ArrayBuffer(8));
function fromBits(bits) {
  view.setBigUint64(0, bits);
  return view.getFloat64(0);
}
function toBits(x) {
  view.setFloat64(0, x);
  return view.getBigUint64(0);
}

const CANONICAL_NAN = 0x7ff8000000000000n;
const SIGN = 1n << 63n;
const seen = new Set();
const lines = [];
function add(x) {
  // NaN has many bit patterns and one spelling; record it once, canonically.
  const bits = Number.isNaN(x) ? CANONICAL_NAN : toBits(x);
  const hex = bits.toString(16).padStart(16, "0");
  if (seen.has(hex)) return;
  seen.add(hex);
  lines.push(`${hex} ${String(x)}`);
}
const addBoth = (x) => { add(x); add(-x); };
function addNeighbours(x) {
  const b = toBits(x);
  for (const nb of [b - 1n, b, b + 1n]) {
    const y = fromBits(nb & MASK);
    if (!Number.isNaN(y)) addBoth(y);
  }
}

// Specials.
add(0); add(-0); add(Infinity); add(-Infinity); add(NaN);
addBoth(Number.MAX_VALUE); addBoth(Number.MIN_VALUE);

// Subnormal edges and random subnormals.
addBoth(fromBits(1n));                    // smallest subnormal
addBoth(fromBits(2n));
addBoth(fromBits(0x000fffffffffffffn));   // largest subnormal
addBoth(fromBits(0x0010000000000000n));   // smallest normal
addBoth(fromBits(0x0010000000000001n));
for (let i = 0; i < 3000; i++) {
  const mant = next64() & 0x000fffffffffffffn;
  const sign = next64() & 1n ? SIGN : 0n;
  add(fromBits(sign | (mant === 0n ? 1n : mant)));
}

// Every power of ten from 1e-330 to 1e308, each with its f64 neighbours
// (this covers the layout thresholds 1e-7, 1e-6, 1e-5, 1e20, 1e21, 1e22).
for (let e = -330; e <= 308; e++) {
  const p = Number(`1e${e}`);
  if (p === 0) { add(0); continue; }
  addNeighbours(p);
}
for (const t of [1e-7, 1e-6, 1e-5, 1e20, 1e21, 1e22]) addNeighbours(t);

// Integers near 2^53 (and its neighbouring binades), where spacing changes.
for (const base of [2 ** 52, 2 ** 53, 2 ** 54]) {
  for (let d = -64; d <= 64; d++) addBoth(base + d);
}
addBoth(Number.MAX_SAFE_INTEGER); addBoth(Number.MIN_SAFE_INTEGER);

// Familiar values.
// Exact ties between the two shortest candidates, which ECMAScript breaks
// toward the even digit (k + 0.25 and k + 0.75 at 2^50..2^52, where the
// f64 spacing is 1/4, 1/4 and 1/2... and a few at other scales).
for (let k = 0; k < 60; k++) {
  addBoth(2 ** 50 + k + 0.25);
  addBoth(2 ** 50 + k + 0.75);
  addBoth(2 ** 49 + k * 7 + 0.125);
  addBoth((2 ** 51 + k) + 0.5);
}
for (const x of [0.1, 0.2, 0.3, 0.1 + 0.2, 1 / 3, 2 / 3, 1 / 7, 0.5, 1.5, 123.5,
  Math.PI, Math.E, Math.SQRT2, Math.LN2, 1e-7 * 1.5, 123456789012345680000,
  999999999999999900000, 0.000001, 0.0000015, 1, 10, 100, 255, 65504,
  3.4028234663852886e38, 1.1754943508222875e-38, 2 ** -1074, 2 ** 1023]) addBoth(x);

// Random bit patterns, both signs; NaN payloads are redrawn, not recorded.
for (let n = 0; n < 6000;) {
  const x = fromBits(next64());
  if (Number.isNaN(x)) continue;
  add(x);
  n++;
}

// Random doubles in [0, 1) the usual way: 53 random bits times 2^-53.
for (let i = 0; i < 2000; i++) add(Number(next64() >> 11n) * 2 ** -53);

// Random integers of every magnitude up to 2^64 and beyond the safe range.
for (let i = 0; i < 1500; i++) {
  const bits = 1 + below(70);
  const v = Number(next64() >> BigInt(64 - Math.min(bits, 64))) * 2 ** Math.max(0, bits - 64);
  add(i % 2 ? -v : v);
}

// Numbers with 1..17 significant digits; half with exponents near the
// plain/exponential boundaries, half anywhere in the f64 range.
for (let k = 1; k <= 17; k++) {
  for (let i = 0; i < 160; i++) {
    let m = String(1 + below(9));
    for (let j = 1; j < k; j++) m += String(below(10));
    const e = i % 2 ? -12 + below(40) : -340 + below(650);
    const x = Number(`${i % 4 < 2 ? "" : "-"}${m}e${e}`);
    if (!Number.isNaN(x)) add(x);
  }
}

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const out = join(root, "testdata", "vectors", "format_number.txt");
mkdirSync(dirname(out), { recursive: true });
const header =
  `# format_number vectors: <f64 bits as 16 hex digits> <String(x)>, raw from Node ${process.version}` +
  ` (splitmix64 seed 0x${SEED.toString(16)}); regenerate with: node tools/oracle/format_number.mjs`;
writeFileSync(out, [header, ...lines].join("\n") + "\n");
console.log(`wrote ${lines.length} vectors to ${out}`);
