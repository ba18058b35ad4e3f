// merge.js's worker: one run's samples.json.gz -> its SeriesSet (series.js) of
// the metrics asked for, posted back as a histograms document.
import { parentPort, workerData } from 'node:worker_threads';
import { FILES } from '../../common/results.js';
import { SeriesSet } from './series.js';

const set = await new SeriesSet({ metrics: new Set(workerData.metrics) }).readSamples(workerData.file);
parentPort.postMessage(set.toDocument(FILES.samples));
