// A Debian package a test needs (chromium, prometheus), installed by the test itself
// with apt-get as root, as here and in CI: never assumed present.
import { execa } from 'execa';

// -> null when installed, else why not (one line).
export async function aptInstall(pkg) {
  if (process.getuid?.() !== 0)
    return `${pkg} is not installed and this user cannot install it: run \`sudo apt-get install -y ${pkg}\` and test again`;
  const apt = (args) =>
    execa('apt-get', args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      reject: false,
      timeout: 600000,
      stdin: 'ignore',
    });
  let r = await apt(['install', '-y', '--no-install-recommends', pkg]);
  if (r.exitCode !== 0) {
    await apt(['update']);
    r = await apt(['install', '-y', '--no-install-recommends', pkg]);
  }
  return r.exitCode === 0
    ? null
    : `apt-get install ${pkg} failed (${r.exitCode}): ${r.stderr.split('\n').slice(-3).join(' ')}`;
}
