import { ErrorCode, RollerError } from '../../core/errors.js';
import type { LaunchPlan } from './launch-plan.js';
// Types only (erased at run time): the manifests are object literals of the Kubernetes API's own types, so a misspelt
// field fails the build; the tests validate them against its schema too.
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import type { IPodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec';

export interface KubernetesOptions {
  plan: LaunchPlan;
  /** An image holding roller (on PATH as `roller`), node and the harness's runtime. */
  image: string;
  /** A PersistentVolumeClaim every pod mounts (ReadWriteMany when shards run on several nodes): the runs and tasks live there. */
  claim: string;
  /** Where the claim is mounted; the pods run in it, so --tasks and --output are read relative to it. */
  mountPath: string;
  namespace?: string;
  /** Pods at once (default: all shards). */
  parallelism?: number;
  /** Per pod, as Kubernetes writes them (e.g. 2, 500m; 4Gi); default DEFAULT_POD_CPU / DEFAULT_POD_MEMORY. */
  cpu?: string;
  memory?: string;
  /** NAME=SECRET/KEY: an environment variable from a Secret (a model's key); the manifest holds only the reference. */
  secretEnv: string[];
  /** The user the pods run as (never root). */
  uid: number;
}


/** Per pod when --cpu / --memory are not given: a harness, its tools and roller fit; a runaway does not take the node. */
export const DEFAULT_POD_CPU = '2';
export const DEFAULT_POD_MEMORY = '8Gi';

/** A DNS-1123 name from the run name: lowercase, '-' for anything else, at most 52 characters (room for the suffixes). */
export function jobName(runName: string, suffix: string): string {
  const base = runName.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 52) || 'run';
  return `roller-${base}-${suffix}`.replace(/-+$/, '');
}

/**
 * An Indexed Job of the shards (each pod's JOB_COMPLETION_INDEX is its shard; ROLLER_SHARD_COUNT says of how many) and a
 * Job of the merge, both running the commands of the launch plan Slurm runs. Kubernetes has no job dependency: apply the
 * merge once the shards' Job is complete (kubectl wait --for=condition=complete).
 */
export function kubernetesManifests(o: KubernetesOptions): { shards: IJob; merge: IJob } {
  if (o.uid === 0) throw new RollerError(ErrorCode.INVALID_OPTIONS, '--uid 0: the pods never run as root');
  // A pod (no capabilities, the runtime's seccomp profile) refuses the agent a namespace of its own: a keyed collect
  // there is refused unless the user accepts that the agent can read roller's environment.
  if (o.secretEnv.length > 0 && !o.plan.shardArgs.includes('--agent-may-read-key')) {
    throw new RollerError(
      ErrorCode.INVALID_OPTIONS,
      `--secret-env: a pod gives the agent no namespace of its own (no capabilities, seccomp RuntimeDefault), so every tool the agent runs could read roller's environment and the key in it; each shard would be refused. Add --agent-may-read-key to the collect arguments to accept that, or collect keyed models on machines with namespaces (roller slurm, a queue)`,
    );
  }
  const labels = { 'app.kubernetes.io/name': 'roller', 'app.kubernetes.io/instance': jobName(o.plan.runName, '').replace(/-$/, '') };
  const resources = { cpu: o.cpu ?? DEFAULT_POD_CPU, memory: o.memory ?? DEFAULT_POD_MEMORY };
  const pod = (name: string, args: string[], env: IEnvVar[]): IPodTemplateSpec => ({
    metadata: { labels },
    spec: {
      restartPolicy: 'Never',
      // roller talks to no Kubernetes API: no token in the pod for an agent to find.
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: o.uid, runAsGroup: o.uid, fsGroup: o.uid, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name,
          image: o.image,
          command: ['roller'],
          args,
          workingDir: o.mountPath,
          env,
          // The image is read-only; roller and the harness write the claim (runs, each attempt's HOME) and /tmp.
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          volumeMounts: [
            { name: 'runs', mountPath: o.mountPath },
            { name: 'tmp', mountPath: '/tmp' },
          ],
          resources: { requests: resources, limits: resources },
        },
      ],
      volumes: [
        { name: 'runs', persistentVolumeClaim: { claimName: o.claim } },
        { name: 'tmp', emptyDir: { sizeLimit: '4Gi' } },
      ],
    },
  });
  // Only the shards call a model: the merge's pod gets no key.
  const shardEnv: IEnvVar[] = [{ name: 'ROLLER_SHARD_COUNT', value: String(o.plan.shards) }, ...o.secretEnv.map(secretRef)];
  const metadata = (suffix: string) => ({ name: jobName(o.plan.runName, suffix), labels, ...(o.namespace ? { namespace: o.namespace } : {}) });
  return {
    shards: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: metadata('shards'),
      spec: {
        completionMode: 'Indexed',
        completions: o.plan.shards,
        parallelism: Math.min(o.parallelism ?? o.plan.shards, o.plan.shards),
        // A pod that fails is retried (its shard resumes); past this many failures in all, the Job fails.
        backoffLimit: Math.max(6, o.plan.shards * 2),
        template: pod('shard', o.plan.shardArgs, shardEnv),
      },
    },
    merge: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: metadata('merge'),
      spec: { completions: 1, backoffLimit: 2, template: pod('merge', o.plan.mergeArgs, []) },
    },
  };
}


function secretRef(spec: string): IEnvVar {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)=([a-z0-9][a-z0-9.-]*)\/([-._A-Za-z0-9]+)$/.exec(spec);
  if (!m) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--secret-env ${spec}: NAME=SECRET/KEY (the variable the model config names, and the Secret and key holding it)`);
  return { name: m[1]!, valueFrom: { secretKeyRef: { name: m[2]!, key: m[3]! } } };
}
