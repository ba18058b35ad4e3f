// Preloaded with `node --import` into a process whose peak memory a bench
// reports: at exit, writes getrusage's maxRSS (KB, the whole process with its
// worker threads) to $K6PACK_MAX_RSS_FILE.
import { writeFileSync } from 'node:fs';
import { rawSetting } from '../../common/settings.js';

const file = rawSetting(process.env, 'K6PACK_MAX_RSS_FILE');
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
