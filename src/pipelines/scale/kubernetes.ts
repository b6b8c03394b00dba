import { ErrorCode, RollerError } from '../../core/errors.js';
import type { LaunchPlan } from './launch-plan.js';
// Types only (erased at run time): the manifests are object literals of the Kubernetes API's own types, so a misspelt
// field fails the build; the tests validate them against its schema too.
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import type { IPodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec';
import type { IResourceRequirements } from 'kubernetes-models/v1/ResourceRequirements';

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
  /** Per pod, as Kubernetes writes them (e.g. 2, 500m; 4Gi). */
  cpu?: string;
  memory?: string;
  /** NAME=SECRET/KEY: an environment variable from a Secret (a model's key); the manifest holds only the reference. */
  secretEnv: string[];
  /** The user the pods run as (never root). */
  uid: number;
}


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
  const env: IEnvVar[] = [{ name: 'ROLLER_SHARD_COUNT', value: String(o.plan.shards) }, ...o.secretEnv.map(secretRef)];
  const labels = { 'app.kubernetes.io/name': 'roller', 'app.kubernetes.io/instance': jobName(o.plan.runName, '').replace(/-$/, '') };
  const pod = (name: string, args: string[]): IPodTemplateSpec => ({
    metadata: { labels },
    spec: {
      restartPolicy: 'Never',
      securityContext: { runAsNonRoot: true, runAsUser: o.uid, runAsGroup: o.uid, fsGroup: o.uid },
      containers: [
        {
          name,
          image: o.image,
          command: ['roller'],
          args,
          workingDir: o.mountPath,
          env,
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          volumeMounts: [{ name: 'runs', mountPath: o.mountPath }],
          ...(o.cpu || o.memory ? { resources: { requests: limits(o), limits: limits(o) } } : {}),
        },
      ],
      volumes: [{ name: 'runs', persistentVolumeClaim: { claimName: o.claim } }],
    },
  });
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
        template: pod('shard', o.plan.shardArgs),
      },
    },
    merge: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: metadata('merge'),
      spec: { completions: 1, backoffLimit: 2, template: pod('merge', o.plan.mergeArgs) },
    },
  };
}

function limits(o: KubernetesOptions): NonNullable<IResourceRequirements['limits']> {
  return { ...(o.cpu ? { cpu: o.cpu } : {}), ...(o.memory ? { memory: o.memory } : {}) };
}

function secretRef(spec: string): IEnvVar {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)=([a-z0-9][a-z0-9.-]*)\/([-._A-Za-z0-9]+)$/.exec(spec);
  if (!m) throw new RollerError(ErrorCode.INVALID_OPTIONS, `--secret-env ${spec}: NAME=SECRET/KEY (the variable the model config names, and the Secret and key holding it)`);
  return { name: m[1]!, valueFrom: { secretKeyRef: { name: m[2]!, key: m[3]! } } };
}
