/**
 * The engines' launch files from one plan: the Slurm scripts and the Kubernetes manifests run the same shard and merge
 * commands; the manifests are valid Kubernetes batch/v1 Jobs (the API's own schema, kubernetes-models) and hold no secret.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { kubernetesManifests } from '../../../src/pipelines/scale/kubernetes.js';
import { launchPlan, shellWord } from '../../../src/pipelines/scale/launch-plan.js';
import { writeSlurmScripts } from '../../../src/pipelines/scale/slurm.js';
import { roller } from '../../support/collect-run.js';
import { useTempDir } from '../../support/temp-dir.js';

const tmp = useTempDir('launchers');
const collectArgs = ['--tasks', 'tasks/my tasks.jsonl', '--harness', 'codex', '--model', 'openai/gpt-5', '--model-config', 'models.json', '--output', 'runs', '--run-name', 'big', '--agent-may-read-key'];

describe('launch files', () => {
  const plan = launchPlan(collectArgs, { runName: 'big', output: 'runs', shards: 4 });

  it('one plan: every shard runs collect --shard env --resume; the merge joins the four shard directories', () => {
    expect(plan.shardArgs).toEqual(['collect', ...collectArgs, '--shard', 'env', '--resume']);
    expect(plan.mergeArgs).toEqual(['merge', 'runs/big.shard-0-of-4', 'runs/big.shard-1-of-4', 'runs/big.shard-2-of-4', 'runs/big.shard-3-of-4', '--output', 'runs/big']);
    expect(shellWord("it's a file")).toBe(`'it'\\''s a file'`);
  });

  it('Slurm: an array 0..N-1 (at most M at once) running the plan, and a merge script', async () => {
    const scripts = await writeSlurmScripts({ plan, roller: ['/usr/bin/node', '/opt/roller/bin/roller'], workDir: '/home/me/project', sbatchOptions: ['--partition=cpu', '--time=04:00:00'], maxRunning: 2 });
    const shards = readFileSync(scripts.shards, 'utf8');
    expect(shards).toContain('#SBATCH --array=0-3%2\n');
    expect(shards).toContain('\nexport ROLLER_SHARD_COUNT=4\n'); // an element resubmitted alone keeps its shard
    expect(shards).toContain('#SBATCH --partition=cpu\n#SBATCH --time=04:00:00\n');
    expect(shards).toContain(`exec /usr/bin/node /opt/roller/bin/roller ${plan.shardArgs.map(shellWord).join(' ')}\n`);
    expect(shards).toContain("'tasks/my tasks.jsonl'");
    // The merge names, for a shard that did not finish, the line that runs its element again and the merge after it.
    const resubmit = `JOB=$(sbatch --parsable --array={shard} ${scripts.shards}) && sbatch --dependency=afterany:$JOB ${scripts.merge}`;
    expect(readFileSync(scripts.merge, 'utf8')).toContain(`exec /usr/bin/node /opt/roller/bin/roller ${[...plan.mergeArgs, '--resubmit', resubmit].map(shellWord).join(' ')}\n`);
  });

  it('Slurm: a value that would end its line (a newline) is refused; quotes and $( ) in a collect argument reach roller as they are', async () => {
    const write = (p: typeof plan, sbatchOptions: string[] = []) => writeSlurmScripts({ plan: p, roller: ['/usr/bin/printf', '[%s]\\n'], workDir: tmp.path, sbatchOptions });
    const injected = (args: string[], runName = 'big', output = 'runs') => launchPlan([...args, '--run-name', runName], { runName, output, shards: 2 });
    await expect(write(injected([]), ['--partition=cpu\ntouch /tmp/pwned'])).rejects.toThrow(/--sbatch-option "--partition=cpu\\ntouch \/tmp\/pwned" holds a newline/);
    await expect(write(injected([], 'big\nid'))).rejects.toThrow(/--run-name "big\\nid" holds a newline/);
    await expect(write(injected([], 'big', 'runs\nid'))).rejects.toThrow(/--output "runs\\nid" holds a newline/);
    await expect(write(injected(['--tasks', 't\n.jsonl']))).rejects.toThrow(/a collect argument "t\\n.jsonl" holds a newline/);
    await expect(write(injected([], 'big', 'my runs'))).rejects.toThrow(/goes on an #SBATCH line/);
    await expect(write(injected([]), ['--comment=$(id)'])).rejects.toThrow(/goes on an #SBATCH line/);
    // Run as bash runs it: the tasks path with a quote and a command substitution is one argument, nothing executed.
    const hostile = `t'$(touch ${join(tmp.path, 'pwned')})".jsonl`;
    const scripts = await write(injected(['--tasks', hostile]));
    const ran = spawnSync('bash', [scripts.shards], { encoding: 'utf8' });
    expect(ran.status, ran.stderr).toBe(0);
    expect(ran.stdout.split('\n')).toContain(`[${hostile}]`);
    expect(existsSync(join(tmp.path, 'pwned'))).toBe(false);
  });

  it('Kubernetes: an Indexed Job of the shards and a merge Job, valid against the API schema, non-root, keys by reference', () => {
    const m = kubernetesManifests({ plan, image: 'registry.local/roller:1', claim: 'roller-runs', mountPath: '/data', secretEnv: ['OPENAI_API_KEY=model-keys/openai'], uid: 1000, parallelism: 2, cpu: '2', memory: '4Gi', namespace: 'agents' });
    for (const manifest of [m.shards, m.merge]) expect(() => new Job(manifest).validate()).not.toThrow();
    expect(m.shards.spec).toMatchObject({ completionMode: 'Indexed', completions: 4, parallelism: 2 });
    const shard = m.shards.spec!.template.spec!.containers[0]!;
    expect([...shard.command!, ...shard.args!]).toEqual(['roller', ...plan.shardArgs]);
    expect(shard.env).toEqual([{ name: 'ROLLER_SHARD_COUNT', value: '4' }, { name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: 'model-keys', key: 'openai' } } }]);
    for (const job of [m.shards, m.merge]) {
      const spec = job.spec!.template.spec!;
      // No service-account token to find, the runtime's seccomp profile, a read-only image, limits.
      expect(spec).toMatchObject({ automountServiceAccountToken: false, securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } } });
      expect(spec.containers[0]!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(spec.containers[0]!.resources).toEqual({ requests: { cpu: '2', memory: '4Gi' }, limits: { cpu: '2', memory: '4Gi' } });
      expect(spec.containers[0]!.volumeMounts!.map((v) => v.mountPath)).toEqual(['/data', '/tmp']);
    }
    const merge = m.merge.spec!.template.spec!.containers[0]!;
    expect([...merge.command!, ...merge.args!]).toEqual(['roller', ...plan.mergeArgs]);
    expect(merge.env).toEqual([]); // the merge calls no model: no key
    // Without --cpu/--memory, the defaults (recorded in the manifest).
    const plain = kubernetesManifests({ plan, image: 'i', claim: 'c', mountPath: '/d', secretEnv: [], uid: 1000 });
    expect(plain.shards.spec!.template.spec!.containers[0]!.resources).toEqual({ requests: { cpu: '2', memory: '8Gi' }, limits: { cpu: '2', memory: '8Gi' } });
    // A keyed collect in pods, where the agent could read roller's environment, only when the collect accepts it.
    const unaccepted = launchPlan(collectArgs.filter((a) => a !== '--agent-may-read-key'), { runName: 'big', output: 'runs', shards: 2 });
    expect(() => kubernetesManifests({ plan: unaccepted, image: 'i', claim: 'c', mountPath: '/d', secretEnv: ['OPENAI_API_KEY=model-keys/openai'], uid: 1000 })).toThrow(/a pod gives the agent no namespace of its own[\s\S]*--agent-may-read-key/);
    // A manifest that breaks the schema is caught by the same check.
    expect(() => new Job({ ...m.shards, spec: { ...m.shards.spec!, completions: '4' as unknown as number } }).validate()).toThrow(/completions must be integer/);
    expect(() => kubernetesManifests({ plan, image: 'i', claim: 'c', mountPath: '/d', secretEnv: ['OPENAI_API_KEY=sk-live-123'], uid: 1000 })).toThrow(/NAME=SECRET\/KEY/);
  });

  it('roller k8s writes the YAML the library builds; roller slurm --no-submit the scripts; bad collect arguments are refused first', async () => {
    const out = join(tmp.path, 'k8s');
    const r = await roller(['k8s', '--shards', '3', '--image', 'roller:dev', '--claim', 'runs', '--out-dir', out, '--', '--tasks', 't.jsonl', '--run-name', 'demo']);
    expect(r.code, r.stderr).toBe(0);
    const shards = parse(readFileSync(join(out, 'shards.yaml'), 'utf8')) as Record<string, unknown>;
    expect(() => new Job(shards).validate()).not.toThrow();
    expect(r.stderr).toContain('kubectl wait --for=condition=complete --timeout=-1s job/roller-demo-shards');
    const noName = await roller(['slurm', '--shards', '2', '--no-submit', '--', '--tasks', 't.jsonl']);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/need --run-name/);
    const typo = await roller(['slurm', '--shards', '2', '--no-submit', '--', '--tasks', 't.jsonl', '--run-name', 'x', '--modle', 'a']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/the collect arguments: .*--modle/);
    const own = await roller(['k8s', '--shards', '2', '--image', 'i', '--claim', 'c', '--', '--tasks', 't.jsonl', '--run-name', 'x', '--shard', '0/2']);
    expect(own.code).toBe(2);
    expect(own.stderr).toMatch(/leave out --shard/);
  });
});
