import { realpathSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { ErrorCode, RollerError } from '../core/errors.js';
import { checkedCollectArgs } from './collect-command.js';
import { positiveInt, reportSinkFailures, sinkSpecsOf, withSinkOptions, timerSeconds } from './options.js';
import { printLine } from './output.js';
import { defaultCacheDir } from '../harnesses/cache-dir.js';
import { rollerVersion } from '../core/version.js';

/** `roller merge`, `roller slurm`, `roller k8s`: a run past one machine, on engines that already exist. */
export function registerScaleCommands(program: Command): void {
  const mergeCommand = program
    .command('merge')
    .description("join a run's shards (roller collect --shard I/N) into the run: the same lock on every shard, every request exactly once; samples hard-linked (or moved), info.json, lock.json and the run's SFT files built as collect builds them")
    .argument('<parts...>', "the shards' run directories (<run-name>.shard-I-of-N)")
    .requiredOption('--output <dir>', 'the merged run directory (must not exist, or be empty)')
    .option('--move', 'move each sample into the run instead of hard-linking it (the shards are emptied)')
    .option('--resubmit <command>', 'how a shard is run again where the parts were made, {shard} standing for its index: named when a part did not finish (roller slurm\'s merge job passes its sbatch line)')
    .option('--json', 'print the merged run info as JSON on stdout');
  withSinkOptions(mergeCommand)
    .action(async (parts: string[], opts: { output: string; move?: boolean; resubmit?: string; json?: boolean; sink?: string[]; sinkOption?: string[]; sinkOptions?: string; sinkTimeout?: number }) => {
      const { merge } = await import('../pipelines/scale/merge.js');
      const { runDir, info, placed, sinkFailures } = await merge({ parts, output: opts.output, mode: opts.move ? 'move' : 'link', ...(opts.resubmit ? { resubmit: opts.resubmit } : {}), sinkSpecs: await sinkSpecsOf(opts), ...(opts.sinkTimeout ? { sinkTimeoutS: opts.sinkTimeout } : {}) });
      const how = [placed.linked ? `${placed.linked} files linked` : '', placed.copied ? `${placed.copied} copied (another filesystem)` : '', placed.moved ? `${placed.moved} samples moved` : ''].filter(Boolean).join(', ');
      process.stderr.write(`roller merge: ${info.samples.length} samples from ${parts.length} parts into ${runDir} (${how || 'nothing to place'}); ${info.summary.ok} ok, ${info.summary.failed} failed; sft.jsonl holds ${info.summary.sft_included ?? 0}\n`);
      await printLine(opts.json ? JSON.stringify(info) : runDir);
      process.exitCode = info.summary.failed === 0 ? 0 : 1;
      reportSinkFailures('merge', sinkFailures);
    });

  program
    .command('worker')
    .description('run queued samples (roller collect --queue) until stopped: any number of workers, on any machine that sees the run directories at the same paths; a worker killed mid-sample has its sample run again by another')
    .requiredOption('--queue <redis-url>', 'the Redis of the queue (redis://HOST:PORT[/DB])')
    .option('--queue-name <name>', 'the BullMQ queue', 'roller')
    .option('--concurrency <n>', 'samples at once in this worker', positiveInt, 1)
    .option('--lock <s>', "seconds a sample stays this worker's without word from it: a killed worker's sample runs again within about twice this", timerSeconds, 30)
    .option('--until-empty', 'leave once the queue holds no job waiting or running, after this worker ran one or 60 s passed without any (else run until Ctrl-C)')
    .requiredOption('--runs-root <dir>', 'repeatable; take only runs under this directory (a job naming any other is refused)', collectValues)
    .option('--allow-api-base <url>', "repeatable; an API base a run's models may call (a run naming another is refused; the scripted model needs none)", collectValues)
    .option('--allow-key-env <name>', "repeatable; a key variable a run's models may read from this worker's environment (a run naming another is refused)", collectValues)
    .option('--redis-no-password', 'accept a Redis without a password (anyone who reaches it could queue work; refused without this)')
    .option('--cache-dir <dir>', 'where pinned harness CLIs are installed', defaultCacheDir())
    .action(async (opts: { queue: string; queueName: string; concurrency: number; lock: number; untilEmpty?: boolean; cacheDir: string; runsRoot: string[]; allowApiBase?: string[]; allowKeyEnv?: string[]; redisNoPassword?: boolean }) => {
      const [{ runWorker }, { parseQueueUrl, queueSecret, refusePasswordlessRedis }] = await Promise.all([import('../pipelines/scale/queue-worker.js'), import('../pipelines/scale/queue-jobs.js')]);
      const url = parseQueueUrl(opts.queue);
      refusePasswordlessRedis(url, opts.redisNoPassword === true);
      const secret = queueSecret();
      const controller = new AbortController();
      const onSignal = () => {
        if (controller.signal.aborted) process.exit(130); // a second Ctrl-C: leave now; the samples running here run again elsewhere
        process.stderr.write('roller worker: stopping; the samples running here finish first (Ctrl-C again to leave at once)\n');
        controller.abort();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      const say = (line: string) => process.stderr.write(`roller worker: ${line}\n`);
      const counts = await runWorker({
        queue: { url, name: opts.queueName },
        secret,
        runsRoots: opts.runsRoot,
        allowApiBases: opts.allowApiBase ?? [],
        allowKeyEnvs: opts.allowKeyEnv ?? [],
        concurrency: opts.concurrency,
        lockS: opts.lock,
        cacheDir: opts.cacheDir,
        ...(opts.untilEmpty ? { untilEmpty: true } : {}),
        signal: controller.signal,
        rollerVersion,
        onNotice: say,
        onStart: (d) => say(`started ${d.index}_${d.task_id} (${d.model}) of ${d.run_dir}`),
        onSample: (d, r) => say('error' in r ? `failed ${d.index}_${d.task_id} (${d.model}): ${r.error}` : `${r.status} ${d.index}_${d.task_id} (${d.model})${r.published ? '' : ' (another worker\'s copy was in place first: this one is dropped)'}`),
      });
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      const cpu = process.cpuUsage();
      // roller's own CPU (this process: proxy, projection, capture), the harness processes' apart.
      say(`${counts.processed} samples done, ${counts.failed} failed; roller's own CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms${counts.setupCpuMs === null ? '' : ` (${counts.setupCpuMs} ms of it starting and planning the run)`}`);
      process.exitCode = counts.failed === 0 ? 0 : 1;
    });

  program
    .command('slurm')
    .description('run a collect as a Slurm array of shards and a merge that waits for them: writes <output>/<run-name>.slurm/{shards,merge}.sbatch and submits them with sbatch')
    .requiredOption('--shards <n>', 'how many shards (array tasks)', positiveInt)
    .option('--max-running <n>', 'at most this many shards at once (--array=0-(N-1)%M)', positiveInt)
    .option('--sbatch-option <opt>', 'repeatable; an #SBATCH option for the shards, e.g. --partition=gpu, --time=04:00:00, --cpus-per-task=2', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--sbatch <path>', 'the sbatch to submit with', 'sbatch')
    .option('--no-submit', 'write the scripts and print how to submit them, without submitting')
    .argument('<collect-args...>', "roller collect's arguments after --: the same for every shard (--run-name needed; --shard and --resume are added)")
    .action(async (collectArgs: string[], opts: { shards: number; maxRunning?: number; sbatchOption?: string[]; sbatch: string; submit: boolean }) => {
      const plan = await planOf(collectArgs, opts.shards);
      const { writeSlurmScripts, submitSlurm } = await import('../pipelines/scale/slurm.js');
      const scripts = await writeSlurmScripts({ plan, roller: thisRoller(), workDir: process.cwd(), sbatchOptions: opts.sbatchOption ?? [], ...(opts.maxRunning ? { maxRunning: opts.maxRunning } : {}) });
      if (!opts.submit) {
        process.stderr.write(`roller slurm: scripts in ${scripts.dir}; submit with:\n  JOB=$(sbatch --parsable ${scripts.shards})\n  sbatch --dependency=afterany:$JOB ${scripts.merge}\n`);
        await printLine(scripts.dir);
        return;
      }
      const { shardsJob, mergeJob } = await submitSlurm(scripts, opts.sbatch);
      process.stderr.write(`roller slurm: shards job ${shardsJob} (${plan.shards} array tasks), merge job ${mergeJob} after it; the run appears in ${plan.runDir}; logs in ${join(scripts.dir, 'logs')}\n`);
      await printLine(JSON.stringify({ shards_job: shardsJob, merge_job: mergeJob, run_dir: plan.runDir, scripts: scripts.dir }));
    });

  program
    .command('k8s')
    .description('write Kubernetes manifests for a collect in shards: an Indexed Job (one pod per shard) and a merge Job, on a shared PersistentVolumeClaim')
    .requiredOption('--shards <n>', 'how many shards (the Job\'s completions)', positiveInt)
    .requiredOption('--image <image>', 'an image with roller on PATH, node and the harness\'s runtime')
    .requiredOption('--claim <pvc>', 'the PersistentVolumeClaim every pod mounts (ReadWriteMany for several nodes): tasks and runs live there')
    .option('--mount-path <dir>', 'where the claim is mounted; the pods run in it (--tasks and --output are relative to it)', '/data')
    .option('--namespace <ns>', 'the namespace of the Jobs')
    .option('--parallelism <n>', 'pods at once (default: every shard)', positiveInt)
    .option('--cpu <q>', 'CPU per pod (requests = limits), e.g. 2 or 500m')
    .option('--memory <q>', 'memory per pod (requests = limits), e.g. 4Gi')
    .option('--uid <n>', 'the user the pods run as (never 0)', positiveInt, 1000)
    .option('--secret-env <NAME=SECRET/KEY>', "repeatable; an environment variable from a Secret (a model's key): the manifest holds only the reference", (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--out-dir <dir>', 'where the manifests are written (default: <output>/<run-name>.k8s)')
    .argument('<collect-args...>', "roller collect's arguments after --, as the pods see the claim (--run-name needed)")
    .action(async (collectArgs: string[], opts: { shards: number; image: string; claim: string; mountPath: string; namespace?: string; parallelism?: number; cpu?: string; memory?: string; uid: number; secretEnv?: string[]; outDir?: string }) => {
      const plan = await planOf(collectArgs, opts.shards);
      const [{ kubernetesManifests, jobName }, { stringify }] = await Promise.all([import('../pipelines/scale/kubernetes.js'), import('yaml')]);
      const m = kubernetesManifests({ plan, image: opts.image, claim: opts.claim, mountPath: opts.mountPath, secretEnv: opts.secretEnv ?? [], uid: opts.uid, ...(opts.namespace ? { namespace: opts.namespace } : {}), ...(opts.parallelism ? { parallelism: opts.parallelism } : {}), ...(opts.cpu ? { cpu: opts.cpu } : {}), ...(opts.memory ? { memory: opts.memory } : {}) });
      const dir = resolve(opts.outDir ?? join(plan.output, `${plan.runName}.k8s`));
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(join(dir, 'shards.yaml'), stringify(m.shards));
      await writeFile(join(dir, 'merge.yaml'), stringify(m.merge));
      const ns = opts.namespace ? ` -n ${opts.namespace}` : '';
      process.stderr.write(`roller k8s: manifests in ${dir}; run them with:\n  kubectl apply${ns} -f ${join(dir, 'shards.yaml')}\n  kubectl wait${ns} --for=condition=complete --timeout=-1s job/${jobName(plan.runName, 'shards')}\n  kubectl apply${ns} -f ${join(dir, 'merge.yaml')}\n`);
      await printLine(dir);
    });
}

function collectValues(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

async function planOf(collectArgs: string[], shards: number) {
  const { output, runName } = await checkedCollectArgs(collectArgs);
  if (!runName) throw new RollerError(ErrorCode.INVALID_OPTIONS, 'the collect arguments need --run-name: every shard writes <run-name>.shard-I-of-N, and the merge joins them into <run-name>');
  const { launchPlan } = await import('../pipelines/scale/launch-plan.js');
  return launchPlan(collectArgs, { runName, output, shards });
}

/** This roller as a job on a machine sharing its filesystem runs it: its node and bin/roller, by absolute path. */
function thisRoller(): string[] {
  return [process.execPath, realpathSync(process.argv[1]!)];
}
