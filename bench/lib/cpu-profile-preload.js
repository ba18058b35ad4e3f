// Test-only preload (`NODE_OPTIONS=--import=<this file>`, which allows no
// --cpu-prof): profiles the whole process with V8's sampling profiler through
// an in-process inspector session and writes the profile to
// $CPU_PROFILE_DIR/<pid>.cpuprofile when the process exits (the servers exit
// through process.exit on SIGTERM). bench/server-cost.js --profile uses it.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { rawSetting, setting } from '../../common/settings.js';

const dir = rawSetting(process.env, 'CPU_PROFILE_DIR');
const INTERVAL_US = setting(process.env, 'CPU_PROFILE_INTERVAL_US');

if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: INTERVAL_US });
  session.post('Profiler.start');
  // An in-process session answers synchronously, so this completes inside 'exit'.
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
