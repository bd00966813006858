#!/usr/bin/env node
// Checks deploy/ offline: the Kubernetes manifests parse, say what docs/remote.md says they
// say (the daemon's port, the /health probes, a non-root user, the token from a Secret),
// and, given agent-sandbox's CRD files (`--crds DIR`, or $NSS_AGENT_SANDBOX_CRDS), validate
// against their published schema with unknown fields refused, as `kubectl apply
// --validate=strict` would. The Dockerfile parses and runs the daemon as it is meant to.
// No image is built and no cluster is reached (neither exists where this runs).
//
// Exit 0 when every check passed; 1 with one line per failure. `--json` prints the
// results for __test__/remote/deploy.test.ts.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { DockerfileParser } from 'dockerfile-ast';
import Ajv from 'ajv';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const crdArg = args.includes('--crds') ? args[args.indexOf('--crds') + 1] : process.env.NSS_AGENT_SANDBOX_CRDS;
const failures = [];
const passed = [];
const check = (ok, what) => (ok ? passed : failures).push(what);

// --- the manifests ------------------------------------------------------------------------
const manifests = [];
const k8sDir = join(root, 'deploy', 'k8s');
for (const file of readdirSync(k8sDir).filter((f) => f.endsWith('.yaml')).sort()) {
  // `envsubst` fills ${IMAGE} when users apply them; any image name stands in here.
  const text = readFileSync(join(k8sDir, file), 'utf8').replaceAll('${IMAGE}', 'registry.example/native-shell-service:dev');
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) {
      check(false, `${file}: ${doc.errors[0].message}`);
      continue;
    }
    const value = doc.toJS();
    if (value) manifests.push({ file, value });
  }
}
check(manifests.length > 0, 'deploy/k8s has manifests');

const podSpecs = manifests
  .filter(({ value }) => value.spec?.podTemplate?.spec)
  .map(({ file, value }) => ({ where: `${file} ${value.kind}/${value.metadata?.name}`, spec: value.spec.podTemplate.spec }));
check(podSpecs.length >= 2, 'a Sandbox and a SandboxTemplate carry a pod template');
for (const { where, spec } of podSpecs) {
  const container = spec.containers?.[0] ?? {};
  const port = container.ports?.find((p) => p.containerPort === 49983);
  check(Boolean(port), `${where}: the container exposes 49983 (the port E2B's SDKs use)`);
  for (const probe of ['readinessProbe', 'livenessProbe']) {
    check(container[probe]?.httpGet?.path === '/health', `${where}: ${probe} is GET /health`);
  }
  check(spec.securityContext?.runAsNonRoot === true && spec.securityContext?.runAsUser > 0, `${where}: runs as a non-root user`);
  check(container.securityContext?.allowPrivilegeEscalation === false, `${where}: no privilege escalation`);
  const tokenMount = container.volumeMounts?.find((m) => m.mountPath === '/etc/native-shell-service');
  const tokenVolume = spec.volumes?.find((v) => v.name === tokenMount?.name);
  check(Boolean(tokenVolume?.secret?.secretName), `${where}: the token file comes from a Secret`);
  // The daemon runs as runAsUser; a Secret's files are root's, so they must be readable by others.
  const mode = tokenVolume?.secret?.defaultMode;
  check(mode === undefined || (mode & 0o004) !== 0, `${where}: the token file is readable by the daemon's user (defaultMode ${mode?.toString(8)})`);
  check(Boolean(container.resources?.limits?.memory && container.resources?.limits?.cpu), `${where}: resource limits are set`);
}

if (crdArg && existsSync(crdArg)) {
  validateAgainstCrds(crdArg);
} else {
  passed.push('skipped: validation against agent-sandbox CRD schemas (give --crds DIR or $NSS_AGENT_SANDBOX_CRDS)');
}

// --- the Dockerfile -----------------------------------------------------------------------
const dockerfile = DockerfileParser.parse(readFileSync(join(root, 'deploy', 'Dockerfile'), 'utf8'));
const instructions = dockerfile.getInstructions();
const known = new Set(['FROM', 'ARG', 'RUN', 'ENV', 'WORKDIR', 'COPY', 'USER', 'EXPOSE', 'ENTRYPOINT', 'CMD', 'LABEL']);
for (const instruction of instructions) {
  check(known.has(instruction.getKeyword()), `Dockerfile line ${instruction.getRange().start.line + 1}: ${instruction.getKeyword()} is an instruction`);
}
const stages = dockerfile.getFROMs().map((from) => from.getBuildStage()).filter(Boolean);
for (const copy of dockerfile.getCOPYs()) {
  const from = copy.getFromFlag()?.getValue();
  if (from) check(stages.includes(from), `Dockerfile: COPY --from=${from} names a stage`);
}
const users = instructions.filter((i) => i.getKeyword() === 'USER');
const lastUser = users.at(-1)?.getArgumentsContent() ?? '';
check(lastUser !== '' && !/^(root|0)(:|$)/.test(lastUser), 'Dockerfile: the daemon runs as a non-root USER');
check(instructions.some((i) => i.getKeyword() === 'EXPOSE' && /\b49983\b/.test(i.getArgumentsContent() ?? '')), 'Dockerfile: EXPOSE 49983');
const entrypoint = instructions.filter((i) => i.getKeyword() === 'ENTRYPOINT').at(-1);
let argv = [];
try {
  argv = JSON.parse((entrypoint?.getArgumentsContent() ?? '').replace(/\\\n/g, ' '));
} catch {
  // Left empty: the checks below fail with the reason.
}
// PID 1 is the Rust daemon (it reaps every orphan of the container), Node its child.
check(Array.isArray(argv) && argv[0] === 'native-shell-daemon', 'Dockerfile: ENTRYPOINT is the exec form of the Rust daemon (PID 1, the reaper), not Node');
check(argv.includes('--mcp-server'), 'Dockerfile: the MCP server runs as the daemon\'s child (--mcp-server)');
check(argv.includes('--listen') && argv.includes('--access-token-file'), 'Dockerfile: the daemon listens with a token file');

if (args.includes('--json')) {
  process.stdout.write(`${JSON.stringify({ passed, failures, entrypoint: argv })}\n`);
} else {
  for (const line of passed) console.log(`ok   ${line}`);
  for (const line of failures) console.log(`FAIL ${line}`);
}
process.exitCode = failures.length === 0 ? 0 : 1;

/** Validates each custom resource against the served version of its CRD. */
function validateAgainstCrds(dir) {
  const schemas = new Map();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      const crd = doc.toJS();
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      for (const version of crd.spec.versions ?? []) {
        if (!version.served) continue;
        schemas.set(`${crd.spec.group}/${version.name} ${crd.spec.names.kind}`, strict(version.schema.openAPIV3Schema));
      }
    }
  }
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  for (const { file, value } of manifests) {
    const schema = schemas.get(`${value.apiVersion} ${value.kind}`);
    if (!schema) {
      if (value.apiVersion?.includes('agents.x-k8s.io')) check(false, `${file}: no served CRD for ${value.apiVersion} ${value.kind}`);
      continue;
    }
    const validate = ajv.compile(schema);
    const ok = validate(value);
    check(ok, `${file} ${value.kind}/${value.metadata?.name}: valid against the CRD schema${ok ? '' : ` (${ajv.errorsText(validate.errors)})`}`);
  }
}

/**
 * The schema with unknown fields refused: Kubernetes prunes them silently, so a misspelt
 * field would pass unnoticed; kubectl's strict validation refuses them, and so does this.
 * Kubernetes' own extensions (`x-kubernetes-int-or-string`) are read as what they mean.
 */
function strict(schema) {
  if (Array.isArray(schema)) return schema.map(strict);
  if (!schema || typeof schema !== 'object') return schema;
  const out = {};
  for (const [key, value] of Object.entries(schema)) out[key] = strict(value);
  if (out.properties && !out['x-kubernetes-preserve-unknown-fields'] && out.additionalProperties === undefined) {
    // `metadata` is ObjectMeta, which CRD schemas leave open.
    out.additionalProperties = false;
  }
  if (out['x-kubernetes-int-or-string']) {
    delete out.type;
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  return out;
}
