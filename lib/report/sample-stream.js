// What `k6pack run` does with k6's samples while they stream in: k6 writes its
// JSON output (`--out json=<a FIFO>`, uncompressed, so k6 spends no CPU on gzip)
// into a named pipe; this process reads it line by line into a SeriesSet (the
// run folder's histograms.json.gz: per metric and tag set, trends as
// HdrHistograms) and, when raw samples are kept, gzips the same bytes into
// samples.json.gz. Memory stays bounded whatever the run's length.
//
// Without mkfifo (not a POSIX system), k6 writes samples.json.gz itself and the
// histograms are built from it after k6 exits.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  createWriteStream,
  existsSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { FILES } from '../../common/results.js';
import { lineSplitter } from './k6-json.js';
import { SeriesSet } from './series.js';

// After k6 has exited, how long the reader may take to drain the pipe.
const DRAIN_MS = 60000;

function makeFifo() {
  const dir = mkdtempSync(join(tmpdir(), 'k6pack-samples-'));
  const path = join(dir, 'samples.json');
  try {
    execFileSync('mkfifo', ['-m', '600', path], { stdio: 'ignore', timeout: 5000 });
    return { dir, path };
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

// Starts reading k6's samples for a run folder. Returns { args (for k6 run), finish() }:
// finish(), once k6 has exited, waits for the last samples and writes
// histograms.json.gz (and samples.json.gz when keepSamples). warn(line) reports
// what could not be kept.
export function streamSamples(dir, { keepSamples = true, warn = () => {} } = {}) {
  const histogramsFile = join(dir, FILES.histograms);
  const samplesFile = join(dir, FILES.samples);
  const fifo = makeFifo();
  if (!fifo) {
    // k6 writes the samples itself; the histograms follow from them afterwards.
    return {
      args: ['--out', `json=${samplesFile}`],
      histograms: true,
      finish: async () => {
        if (!existsSync(samplesFile)) return;
        try {
          (await new SeriesSet().readSamples(samplesFile)).write(histogramsFile, FILES.samples);
        } catch (err) {
          warn(`no ${FILES.histograms}: ${err.message}`);
        }
        if (!keepSamples) unlinkSync(samplesFile);
      },
    };
  }

  const set = new SeriesSet();
  let lines = 0;
  let bad = 0;
  const splitter = lineSplitter((line) => {
    lines++;
    try {
      set.addLine(line);
    } catch {
      bad++; // a line cut short (k6 killed): the rest is kept
    }
  });
  const decoder = new StringDecoder('utf8');
  const parse = (chunk) => splitter.push(decoder.write(chunk));
  // Non-blocking, so opening never waits for k6; the pipe reports its end only
  // once a writer (k6) has come and gone.
  const fd = openSync(fifo.path, constants.O_RDONLY | constants.O_NONBLOCK);
  const input = new Socket({ fd, readable: true, writable: false });
  const done = keepSamples
    ? pipeline(
        input,
        new Transform({ transform: (chunk, _, cb) => cb(parse(chunk), chunk) }),
        createGzip(),
        createWriteStream(samplesFile),
      )
    : pipeline(input, new Writable({ write: (chunk, _, cb) => cb(parse(chunk)) }));
  const settled = done.then(
    () => null,
    (err) => err,
  );

  return {
    args: ['--out', `json=${fifo.path}`],
    histograms: true,
    async finish() {
      // A k6 that never opened the pipe (it failed first) leaves the reader
      // waiting: open it for writing once and close it, which ends the stream.
      try {
        closeSync(openSync(fifo.path, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // ENXIO: the reader is gone already
      }
      let timer;
      const err = await Promise.race([
        settled,
        new Promise(
          (res) =>
            (timer = setTimeout(
              () => res(new Error(`k6's samples still streaming ${DRAIN_MS / 1000} s after k6 exited`)),
              DRAIN_MS,
            )),
        ),
      ]);
      clearTimeout(timer);
      if (err) input.destroy();
      splitter.push(decoder.end());
      splitter.end();
      rmSync(fifo.dir, { recursive: true, force: true });
      if (err) warn(`reading k6's samples: ${err.message}`);
      if (bad) warn(`${bad} of k6's sample lines could not be read (cut short?): left out of ${FILES.histograms}`);
      if (!lines) {
        // k6 wrote nothing (it failed before its outputs started): no files for nothing.
        if (existsSync(samplesFile) && statSync(samplesFile).size < 100) unlinkSync(samplesFile);
        return;
      }
      set.write(histogramsFile, 'k6 --out json, read while k6 ran (k6pack run)');
    },
  };
}
