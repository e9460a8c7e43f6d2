// Static checks of the deployment files: every YAML under deploy/ and the
// Dockerfile.  No cluster or container engine needed.
// usage: node check_manifests.mjs [REPO_ROOT]   (default: ../..)
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative, dirname, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const root = process.argv[2] ?? join(here, '..', '..');
const deployDir = join(root, 'deploy');

let passed = 0;
let failed = 0;
function check(name, cond, detail = '') {
  if (cond) {
    passed++;
  } else {
    failed++;
    console.log(`FAIL ${name}${detail ? ': ' + detail : ''}`);
  }
}

// ---------- load every YAML document under deploy/ ----------
function walk(dir) {
  const out = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (/\.ya?ml$/.test(e)) out.push(p);
  }
  return out.sort();
}

const docs = []; // {file, doc}
for (const file of walk(deployDir)) {
  const parsed = parseAllDocuments(readFileSync(file, 'utf8'));
  for (const d of parsed) {
    const errs = d.errors.map((e) => e.message).join('; ');
    check(`${relative(root, file)} parses`, d.errors.length === 0, errs);
    if (d.errors.length === 0 && d.contents !== null) docs.push({ file, doc: d.toJS() });
  }
}
const byKind = (kind) => docs.filter((d) => d.doc && d.doc.kind === kind);
const isSubset = (sub, sup) =>
  sub && sup && Object.keys(sub).length > 0 &&
  Object.entries(sub).every(([k, v]) => sup[k] === v);

// ---------- Deployment ----------
const deps = byKind('Deployment');
check('exactly one Deployment', deps.length === 1, `found ${deps.length}`);
const dep = deps[0]?.doc ?? {};
const depName = dep.metadata?.name;
const podLabels = dep.spec?.template?.metadata?.labels ?? {};
const podSpec = dep.spec?.template?.spec ?? {};
const ctr = (podSpec.containers ?? [])[0] ?? {};
const ports = ctr.ports ?? [];
const httpPort = ports.find((p) => p.name === 'http') ?? ports[0] ?? {};
const portMatches = (p) => p === httpPort.name || p === httpPort.containerPort;

check('Deployment apiVersion apps/v1', dep.apiVersion === 'apps/v1', dep.apiVersion);
check('Deployment selector matches pod labels',
  isSubset(dep.spec?.selector?.matchLabels, podLabels));
check('container port 8080', httpPort.containerPort === 8080, String(httpPort.containerPort));
for (const [probe, path] of [['livenessProbe', '/livez'], ['readinessProbe', '/readyz']]) {
  const g = ctr[probe]?.httpGet;
  check(`${probe} path ${path}`, g?.path === path, g?.path);
  check(`${probe} port is the container port`, g && portMatches(g.port), String(g?.port));
}
for (const kind of ['requests', 'limits']) {
  for (const res of ['cpu', 'memory']) {
    check(`resources.${kind}.${res} set`, ctr.resources?.[kind]?.[res] !== undefined);
  }
}
const sc = ctr.securityContext ?? {};
const psc = podSpec.securityContext ?? {};
const uid = sc.runAsUser ?? psc.runAsUser;
check('runAsNonRoot true', (sc.runAsNonRoot ?? psc.runAsNonRoot) === true);
check('runAsUser is a non-zero integer', Number.isInteger(uid) && uid > 0, String(uid));
check('readOnlyRootFilesystem true', sc.readOnlyRootFilesystem === true);
check('allowPrivilegeEscalation false', sc.allowPrivilegeEscalation === false);
check('capabilities drop ALL', (sc.capabilities?.drop ?? []).includes('ALL'));
check('not privileged', sc.privileged !== true);
const env = Object.fromEntries((ctr.env ?? []).map((e) => [e.name, e.value]));
check('env TRAINSIZE_BIND=0.0.0.0', env.TRAINSIZE_BIND === '0.0.0.0', env.TRAINSIZE_BIND);
check('env TRAINSIZE_PORT = container port',
  Number(env.TRAINSIZE_PORT) === httpPort.containerPort, env.TRAINSIZE_PORT);
// Issue 22: the worker pool and the drain are set, not left to defaults
// that depend on the node (online cores) or on a release; the ranges are
// the server's own (server/ts_config.c).
const intIn = (v, lo, hi) => /^[0-9]+$/.test(String(v ?? '')) && Number(v) >= lo && Number(v) <= hi;
const POOL_ENV = { TRAINSIZE_THREADS: [1, 256], TRAINSIZE_IO_THREADS: [1, 256],
  TRAINSIZE_QUEUE_MAX: [0, 65536], TRAINSIZE_DRAIN_TIMEOUT: [1, 3600] };
for (const [k, [lo, hi]] of Object.entries(POOL_ENV)) {
  check(`env ${k} set explicitly, ${lo}..${hi}`, intIn(env[k], lo, hi), env[k]);
}
// Termination: preStop sleeps while the endpoint is removed (connections
// routed to a terminating pod are still served), then SIGTERM drains for
// up to TRAINSIZE_DRAIN_TIMEOUT; the grace period covers both, with room
// for the exit.  /bin/sleep exists in the image (deploy/container-test.sh).
const preStop = ctr.lifecycle?.preStop?.exec?.command ?? [];
const sleepS = preStop.length === 2 && preStop[0] === '/bin/sleep' && /^[0-9]+$/.test(preStop[1])
  ? Number(preStop[1]) : NaN;
check('preStop runs /bin/sleep N (exec, N >= 1)', sleepS >= 1, JSON.stringify(ctr.lifecycle));
const grace = podSpec.terminationGracePeriodSeconds;
check('terminationGracePeriodSeconds >= preStop sleep + drain timeout + 2',
  Number.isInteger(grace) && grace >= sleepS + Number(env.TRAINSIZE_DRAIN_TIMEOUT) + 2,
  `${grace} vs ${sleepS} + ${env.TRAINSIZE_DRAIN_TIMEOUT} + 2`);

// ---------- Service ----------
const svcs = byKind('Service');
check('a Service exists', svcs.length >= 1);
for (const { doc: svc } of svcs) {
  check(`Service ${svc.metadata?.name} selects the Deployment's pods`,
    isSubset(svc.spec?.selector, podLabels), JSON.stringify(svc.spec?.selector));
  for (const p of svc.spec?.ports ?? []) {
    check(`Service port ${p.port} targets the container port`, portMatches(p.targetPort ?? p.port),
      String(p.targetPort));
  }
}

// ---------- HPA ----------
const hpas = byKind('HorizontalPodAutoscaler');
check('an HPA exists', hpas.length >= 1);
for (const { doc: hpa } of hpas) {
  const ref = hpa.spec?.scaleTargetRef ?? {};
  check('HPA apiVersion autoscaling/v2', hpa.apiVersion === 'autoscaling/v2', hpa.apiVersion);
  check('HPA targets the Deployment',
    ref.kind === 'Deployment' && ref.apiVersion === 'apps/v1' && ref.name === depName,
    JSON.stringify(ref));
  const cpu = (hpa.spec?.metrics ?? []).find((m) => m.type === 'Resource' && m.resource?.name === 'cpu');
  const u = cpu?.resource?.target?.averageUtilization;
  check('HPA CPU utilization target in (0,100]',
    cpu?.resource?.target?.type === 'Utilization' && u > 0 && u <= 100, String(u));
  const min = hpa.spec?.minReplicas ?? 1;
  check('HPA 1 <= minReplicas <= maxReplicas', min >= 1 && min <= hpa.spec?.maxReplicas,
    `${min}..${hpa.spec?.maxReplicas}`);
}

// ---------- PodDisruptionBudget ----------
// A voluntary disruption (node drain, upgrade) takes at most one replica
// down at a time, and never blocks for ever: fewer pods must stay than
// run at the least.
const pdbs = byKind('PodDisruptionBudget');
check('exactly one PodDisruptionBudget', pdbs.length === 1, `found ${pdbs.length}`);
const leastReplicas = Math.min(dep.spec?.replicas ?? 1,
  ...byKind('HorizontalPodAutoscaler').map(({ doc }) => doc.spec?.minReplicas ?? 1));
for (const { doc: pdb } of pdbs) {
  check('PDB apiVersion policy/v1', pdb.apiVersion === 'policy/v1', pdb.apiVersion);
  check('PDB selects the Deployment\'s pods', isSubset(pdb.spec?.selector?.matchLabels, podLabels),
    JSON.stringify(pdb.spec?.selector));
  const minA = pdb.spec?.minAvailable, maxU = pdb.spec?.maxUnavailable;
  check('PDB sets one of minAvailable / maxUnavailable', (minA === undefined) !== (maxU === undefined));
  if (minA !== undefined) {
    check('PDB minAvailable is an integer, 1 <= it < the least replicas',
      Number.isInteger(minA) && minA >= 1 && minA < leastReplicas, `${minA} vs ${leastReplicas}`);
  } else {
    check('PDB maxUnavailable is an integer >= 1', Number.isInteger(maxU) && maxU >= 1, String(maxU));
  }
}

// ---------- NetworkPolicy ----------
// Ingress to the pods only on the service's target port: every rule names
// its ports (a rule without ports opens all of them) and each is the
// container's http port over TCP.
const nps = byKind('NetworkPolicy');
check('exactly one NetworkPolicy', nps.length === 1, `found ${nps.length}`);
for (const { doc: np } of nps) {
  check('NetworkPolicy apiVersion networking.k8s.io/v1', np.apiVersion === 'networking.k8s.io/v1',
    np.apiVersion);
  check('NetworkPolicy selects the Deployment\'s pods',
    isSubset(np.spec?.podSelector?.matchLabels, podLabels), JSON.stringify(np.spec?.podSelector));
  check('NetworkPolicy policyTypes include Ingress', (np.spec?.policyTypes ?? []).includes('Ingress'));
  const rules = np.spec?.ingress ?? [];
  check('NetworkPolicy has an ingress rule', rules.length >= 1);
  rules.forEach((r, i) => {
    const ports = r.ports ?? [];
    check(`NetworkPolicy ingress rule ${i} names its ports`, ports.length >= 1);
    for (const p of ports) {
      check(`NetworkPolicy ingress rule ${i} port ${p.port} is the container port over TCP`,
        portMatches(p.port) && (p.protocol ?? 'TCP') === 'TCP' && p.endPort === undefined,
        JSON.stringify(p));
    }
  });
  const svcTargets = svcs.flatMap(({ doc }) => (doc.spec?.ports ?? []).map((p) => p.targetPort ?? p.port));
  check('NetworkPolicy admits every Service target port',
    svcTargets.every((t) => rules.some((r) => (r.ports ?? []).some((p) =>
      p.port === t || (portMatches(p.port) && portMatches(t))))), JSON.stringify(svcTargets));
}

// ---------- kustomization ----------
const kusts = docs.filter((d) => basename(d.file) === 'kustomization.yaml');
check('deploy/k8s/kustomization.yaml exists', kusts.length === 1);
for (const { file, doc } of kusts) {
  const dir = dirname(file);
  const res = doc.resources ?? [];
  for (const r of res) check(`kustomization resource ${r} exists`, existsSync(join(dir, r)));
  for (const f of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')) {
    check(`kustomization lists ${f}`, res.includes(f));
  }
}

// ---------- compose ----------
const composeFile = join(deployDir, 'compose.yaml');
const compose = docs.find((d) => d.file === composeFile)?.doc;
check('deploy/compose.yaml has services', compose && typeof compose.services === 'object');
for (const [name, s] of Object.entries(compose?.services ?? {})) {
  const test = s.healthcheck?.test ?? [];
  const testStr = Array.isArray(test) ? test.join(' ') : String(test);
  check(`compose ${name} healthcheck runs the CLI`,
    Array.isArray(test) && test[0] === 'CMD' && test[1] === '/usr/local/bin/trainsize' &&
    test[2] === 'health', testStr);
  check(`compose ${name} healthcheck needs no curl/wget`, !/\b(curl|wget)\b/.test(testStr));
  check(`compose ${name} read_only`, s.read_only === true);
  check(`compose ${name} cap_drop ALL`, (s.cap_drop ?? []).includes('ALL'));
  check(`compose ${name} no-new-privileges`,
    (s.security_opt ?? []).some((o) => /^no-new-privileges(:true)?$/.test(o)));
  check(`compose ${name} publishes 8080`,
    (s.ports ?? []).some((p) => String(p).endsWith(':8080') || p?.target === 8080));
  check(`compose ${name} TRAINSIZE_BIND 0.0.0.0`, s.environment?.TRAINSIZE_BIND === '0.0.0.0');
  for (const [k, [lo, hi]] of Object.entries(POOL_ENV)) {
    check(`compose ${name} ${k} set explicitly, ${lo}..${hi}`, intIn(s.environment?.[k], lo, hi),
      s.environment?.[k]);
  }
  const stopS = /^([0-9]+)s$/.exec(String(s.stop_grace_period ?? ''));
  check(`compose ${name} stop_grace_period >= drain timeout + 2`,
    stopS && Number(stopS[1]) >= Number(s.environment?.TRAINSIZE_DRAIN_TIMEOUT) + 2,
    `${s.stop_grace_period} vs ${s.environment?.TRAINSIZE_DRAIN_TIMEOUT}`);
  if (s.user !== undefined) {
    check(`compose ${name} user is the image's uid`, String(s.user).split(':')[0] === String(uid),
      String(s.user));
  }
}

// ---------- Dockerfile ----------
const dfPath = join(root, 'Dockerfile');
check('Dockerfile exists', existsSync(dfPath));
const df = existsSync(dfPath) ? readFileSync(dfPath, 'utf8') : '';
// logical instructions: comments dropped, "\" continuations joined
const instrs = [];
{
  let cur = '';
  for (const raw of df.split('\n')) {
    if (/^\s*#/.test(raw) && cur === '') continue;
    if (/^\s*#/.test(raw)) continue; // comment inside a continuation
    const line = raw.replace(/\s+$/, '');
    if (line.endsWith('\\')) { cur += line.slice(0, -1) + ' '; continue; }
    cur += line;
    if (cur.trim()) {
      const m = cur.trim().match(/^(\S+)\s*(.*)$/s);
      instrs.push({ op: m[1].toUpperCase(), args: m[2].trim() });
    }
    cur = '';
  }
}
const froms = instrs.map((x, i) => [x, i]).filter(([x]) => x.op === 'FROM');
check('Dockerfile is multi-stage', froms.length >= 2, `${froms.length} FROM`);
const lastFrom = froms.length ? froms[froms.length - 1][1] : 0;
const final = instrs.slice(lastFrom);
const finalOp = (op) => final.filter((x) => x.op === op);
const jsonArray = (s) => { try { const v = JSON.parse(s); return Array.isArray(v) ? v : null; } catch { return null; } };

// Base images pinned by digest (issue 22): one ARG before the first FROM,
// defaulting to debian:bookworm-slim at a sha256 digest, and every stage
// built FROM it (deploy/container-test.sh passes its locally made base).
const globalArgs = instrs.slice(0, froms.length ? froms[0][1] : 0).filter((x) => x.op === 'ARG');
const baseArg = globalArgs.map((x) => /^BASE_IMAGE=(\S+)$/.exec(x.args)).find((m) => m);
check('ARG BASE_IMAGE = debian:bookworm-slim pinned by a sha256 digest',
  baseArg && /^debian:bookworm-slim@sha256:[0-9a-f]{64}$/.test(baseArg[1]), baseArg?.[1]);
check('every stage is FROM ${BASE_IMAGE}',
  froms.length > 0 && froms.every(([x]) => /^\$\{?BASE_IMAGE\}?(\s|$)/.test(x.args)),
  froms.map(([x]) => x.args).join(' | '));
check('no image reference by tag alone (COPY --from, FROM)',
  !instrs.some((x) => /--from=[^\s]*:[^\s]*/.test(x.args) && !/@sha256:/.test(x.args)));
const ep = finalOp('ENTRYPOINT');
check('exec-form ENTRYPOINT trainsize-server',
  ep.length === 1 && JSON.stringify(jsonArray(ep[0].args)) === '["/usr/local/bin/trainsize-server"]',
  ep[0]?.args);
const hc = finalOp('HEALTHCHECK');
const hcCmd = hc.length === 1 ? hc[0].args.replace(/^(--\S+\s+)*/, '') : '';
const hcArr = hcCmd.startsWith('CMD') ? jsonArray(hcCmd.slice(3).trim()) : null;
check('HEALTHCHECK runs "trainsize health" (exec form)',
  hcArr && hcArr[0] === '/usr/local/bin/trainsize' && hcArr[1] === 'health', hc[0]?.args);
const users = finalOp('USER');
const user = users.length ? users[users.length - 1].args.split(':')[0] : '';
check('final USER is not root', user !== '' && user !== 'root' && user !== '0', user);
check('Dockerfile USER uid = Kubernetes runAsUser', user === String(uid), `${user} vs ${uid}`);
const expose = finalOp('EXPOSE').flatMap((x) => x.args.split(/\s+/));
check('EXPOSE 8080', expose.includes('8080') || expose.includes('8080/tcp'), expose.join(' '));
const envText = finalOp('ENV').map((x) => x.args).join(' ');
check('ENV TRAINSIZE_BIND=0.0.0.0', /(^|\s)TRAINSIZE_BIND=0\.0\.0\.0(\s|$)/.test(envText));
check('ENV TRAINSIZE_PORT=8080', /(^|\s)TRAINSIZE_PORT=8080(\s|$)/.test(envText));
const finalRun = finalOp('RUN').map((x) => x.args).join(' ');
check('runtime stage installs no curl/wget/compiler',
  !/\b(curl|wget|gcc|clang|meson)\b(?!\S)/.test(finalRun.replace(/libcurl4/g, '')), finalRun);
const build = instrs.slice(0, lastFrom).map((x) => x.args).join(' ');
check('build stage runs meson test', /\bmeson test\b/.test(build));
check('build stage stages with meson install --destdir',
  /DESTDIR=\S+\s+meson install|meson install\b.*--destdir/.test(build));

console.log(`manifests: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
