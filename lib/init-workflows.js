// The two GitHub workflows `k6pack init` writes into a team's repository: the pull
// request's gate and the nightly soak, both through the pack's action (action.yml at
// the root of the pack's repository). Text, not YAML objects: the comments are the
// manual a team reads when it opens the file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './tools.js';

// The action's owner/name: package.json's repository when it names a GitHub one, else
// the placeholder k6pack/k6pack (docs/in-your-repo.md says so).
export function actionRepo(pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))) {
  const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url || '';
  const m = /github(?:\.com[/:]|:)([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : 'k6pack/k6pack';
}
// The action's major version tag: v<major> of the package (v0 while the pack is 0.x).
export function actionRef(pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))) {
  return `${actionRepo(pkg)}@v${String(pkg.version || '0').split('.')[0]}`;
}

// The actions the workflows use, pinned to a commit (as .github/workflows/ pins them).
export const PINNED = {
  checkout: 'actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1',
  setupNode: 'actions/setup-node@820762786026740c76f36085b0efc47a31fe5020 # v7.0.0',
  cacheRestore: 'actions/cache/restore@27d5ce7f107fe9357f9df03efb73ab90386fccae # v5.0.5',
  cacheSave: 'actions/cache/save@27d5ce7f107fe9357f9df03efb73ab90386fccae # v5.0.5',
};

export const GATE_WORKFLOW = '.github/workflows/k6pack-gate.yml';
export const SOAK_WORKFLOW = '.github/workflows/k6pack-soak.yml';

// The steps both workflows start with: the repository, Node, its packages, and the API
// started in the background and waited for on each address it serves.
function startSteps(addresses) {
  return `      - uses: ${PINNED.checkout}
      - uses: ${PINNED.setupNode}
        with:
          node-version: 24
      - name: Install (k6pack is a devDependency)
        run: npm ci
      - name: Start the API (edit API_START above)
        run: |
          nohup bash -c "$API_START" > k6pack-api.log 2>&1 &
          for address in ${addresses.join(' ')}; do
            for _ in $(seq 60); do
              if timeout 1 bash -c "exec 3<>/dev/tcp/\${address%:*}/\${address##*:}" 2>/dev/null; then continue 2; fi
              sleep 1
            done
            echo "the API does not listen on $address after 60 s (API_START: $API_START):"
            cat k6pack-api.log
            exit 1
          done`;
}

// apiFile: the API file's path in the repository; addresses: host:port the API listens on.
export function gateWorkflow({ apiFile, addresses, action = actionRef() }) {
  return `# k6pack's gate on this repository's API, on every pull request and every push to main
# (written by \`npx k6pack init\`: edit it). The pack's action runs
# \`npx k6pack gate --api ${apiFile}\` under lan and lte, writes the verdict to the job
# summary, keeps one comment on the pull request up to date, uploads the report, and
# fails the job on a failed threshold (exit 99) or a regression (exit 3).
#
# Baseline: a push to main that passes keeps its gate folder in the Actions cache; a pull
# request is compared with the newest one of its base branch. History: every push to main
# appends its runs to the k6pack-history branch (contents: write), and a pull request's
# regressions are judged against the spread of its last comparable runs.
name: k6pack gate

on:
  pull_request:
  push:
    branches: [main]
  workflow_dispatch:

permissions:
  contents: read

concurrency:
  group: k6pack-gate-\${{ github.ref }}
  cancel-in-progress: true

jobs:
  gate:
    name: k6pack gate
    runs-on: ubuntu-24.04
    timeout-minutes: 30
    permissions:
      # A push to main appends its runs to the history branch.
      contents: write
      # The one pull-request comment (a fork's token stays read-only: the job summary only).
      pull-requests: write
    env:
      # The command that serves your API on the addresses ${apiFile} names (edit it).
      API_START: npm start
      # Secrets your API file names as \${VAR} in its headers, e.g.:
      # API_TOKEN: \${{ secrets.API_TOKEN }}
    steps:
${startSteps(addresses)}
      - name: Restore the base branch's baseline
        if: \${{ github.event_name == 'pull_request' }}
        uses: ${PINNED.cacheRestore}
        with:
          path: k6pack-baseline
          key: k6pack-baseline-\${{ github.base_ref }}-\${{ github.event.pull_request.base.sha }}
          restore-keys: k6pack-baseline-\${{ github.base_ref }}-
      - name: k6pack gate
        id: gate
        uses: ${action}
        with:
          api-file: ${apiFile}
          profiles: lan,lte
          load: gate
          baseline: \${{ github.event_name == 'pull_request' && 'k6pack-baseline' || '' }}
          history-branch: k6pack-history
          comment: true
      # Only a push whose gate passed becomes the next baseline.
      - name: Keep this gate as the branch's baseline
        if: \${{ success() && github.event_name == 'push' }}
        run: cp -r k6pack-results k6pack-baseline
      - name: Store the baseline
        if: \${{ success() && github.event_name == 'push' }}
        uses: ${PINNED.cacheSave}
        with:
          path: k6pack-baseline
          key: k6pack-baseline-\${{ github.ref_name }}-\${{ github.sha }}
`;
}

export function soakWorkflow({ apiFile, addresses, action = actionRef() }) {
  return `# k6pack's nightly soak on this repository's API (written by \`npx k6pack init\`: edit it):
# every lane of ${apiFile} at once, at a constant arrival rate, for SOAK_DURATION under lte;
# gates p50 drift, dropped iterations and failures (docs: the soak on your API). Every
# night is appended to the k6pack-history branch (contents: write) and compared with the
# nights before. Run it by hand from the Actions tab with another duration.
name: k6pack soak

on:
  schedule:
    - cron: '17 3 * * *'
  workflow_dispatch:
    inputs:
      duration:
        description: How long the soak runs (90s, 15m, 1h, at most 5h)
        default: 1h
        required: false
        type: string

permissions:
  contents: read

concurrency:
  group: k6pack-soak
  cancel-in-progress: false

jobs:
  soak:
    name: k6pack soak
    runs-on: ubuntu-24.04
    timeout-minutes: 360
    permissions:
      # Every night is appended to the history branch.
      contents: write
    env:
      # The command that serves your API on the addresses ${apiFile} names (edit it).
      API_START: npm start
      # k6 reads the soak's length from the environment.
      SOAK_DURATION: \${{ inputs.duration || '1h' }}
    steps:
${startSteps(addresses)}
      - name: k6pack soak
        uses: ${action}
        with:
          api-file: ${apiFile}
          profiles: lte
          load: soak
          history-branch: k6pack-history
          comment: false
`;
}
