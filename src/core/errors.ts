/**
 * One error type for the whole library. Callers branch on `code`, never on the message
 * (the message is for people: what happened, where, and what to do next).
 */
export const ErrorCode = {
  JSONL_LINE_TOO_LONG: 'ROLLER_JSONL_LINE_TOO_LONG',
  JSONL_INVALID_JSON: 'ROLLER_JSONL_INVALID_JSON',
  JSONL_TRUNCATED_LINE: 'ROLLER_JSONL_TRUNCATED_LINE',
  JSON_DOCUMENT_TOO_LARGE: 'ROLLER_JSON_DOCUMENT_TOO_LARGE',
  JSON_INVALID: 'ROLLER_JSON_INVALID',
  SINK_WRITE_FAILED: 'ROLLER_SINK_WRITE_FAILED',
  ATOMIC_WRITE_FAILED: 'ROLLER_ATOMIC_WRITE_FAILED',
  PIPELINE_ABORTED: 'ROLLER_PIPELINE_ABORTED',
  FANOUT_BRANCH_FAILED: 'ROLLER_FANOUT_BRANCH_FAILED',
  INVALID_OPTIONS: 'ROLLER_INVALID_OPTIONS',
  UNKNOWN_SCHEMA: 'ROLLER_UNKNOWN_SCHEMA',
  FILE_NOT_FOUND: 'ROLLER_FILE_NOT_FOUND',
  BODY_DECODE_FAILED: 'ROLLER_BODY_DECODE_FAILED',
  REQUEST_TOO_LARGE: 'ROLLER_REQUEST_TOO_LARGE',
  UPSTREAM_FAILED: 'ROLLER_UPSTREAM_FAILED',
  PROXY_INTERNAL: 'ROLLER_PROXY_INTERNAL',
  SCRIPT_INVALID: 'ROLLER_SCRIPT_INVALID',
  HARNESS_INSTALL_FAILED: 'ROLLER_HARNESS_INSTALL_FAILED',
  NATIVE_SHAPE_UNKNOWN: 'ROLLER_NATIVE_SHAPE_UNKNOWN',
  TOKENS_UNKNOWN: 'ROLLER_TOKENS_UNKNOWN',
  HARNESS_FEATURE_ABSENT: 'ROLLER_HARNESS_FEATURE_ABSENT',
  CONVERSION_INVALID: 'ROLLER_CONVERSION_INVALID',
  WIRE_LOG_CORRUPT: 'ROLLER_WIRE_LOG_CORRUPT',
  WIRE_LOG_INCOMPLETE: 'ROLLER_WIRE_LOG_INCOMPLETE',
  WIRE_LOG_WRITE_FAILED: 'ROLLER_WIRE_LOG_WRITE_FAILED',
  RUN_LOCKED: 'ROLLER_RUN_LOCKED',
  OUTPUT_UNUSABLE: 'ROLLER_OUTPUT_UNUSABLE',
  HASH_MISMATCH: 'ROLLER_HASH_MISMATCH',
  PARTIAL_CAPTURE: 'ROLLER_PARTIAL_CAPTURE',
  DRAIN_INCOMPLETE: 'ROLLER_DRAIN_INCOMPLETE',
  USER_SIMULATOR_FAILED: 'ROLLER_USER_SIMULATOR_FAILED',
  RESULTS_COPY_FAILED: 'ROLLER_RESULTS_COPY_FAILED',
  /** A request through a proxy under key custody without the attempt's stand-in credential. */
  CREDENTIAL_REFUSED: 'ROLLER_CREDENTIAL_REFUSED',
  DECODED_BODY_TOO_LARGE: 'ROLLER_DECODED_BODY_TOO_LARGE',
  /** The harness called its model somewhere other than its recording proxy (or not at all). */
  HARNESS_BYPASSED_PROXY: 'ROLLER_HARNESS_BYPASSED_PROXY',
  /** A task's `files` would write the harness's own configuration. */
  TASK_FILE_REFUSED: 'ROLLER_TASK_FILE_REFUSED',
  /** The agent wrote its harness's own configuration (which could move the model endpoint, credential or proxy). */
  HARNESS_CONFIG_WRITTEN: 'ROLLER_HARNESS_CONFIG_WRITTEN',
  /** The embedded scripted model could not follow its script (the harness did not offer what the script needs). */
  SCRIPT_ERROR: 'ROLLER_SCRIPT_ERROR',
  /** A link where roller reads or writes inside an attempt (planted by the agent, or a native root that is one). */
  LINK_REFUSED: 'ROLLER_LINK_REFUSED',
  /** A port roller was asked to listen on is taken, not allowed, or not an address here. */
  PORT_UNAVAILABLE: 'ROLLER_PORT_UNAVAILABLE',
  /** The native session could not be converted. */
  CONVERSION_FAILED: 'ROLLER_CONVERSION_FAILED',
  /** The harness exited with an error, or said nothing a follow-up could continue. */
  HARNESS_FAILED: 'ROLLER_HARNESS_FAILED',
  /** The sample's time ran out. */
  HARNESS_TIMEOUT: 'ROLLER_HARNESS_TIMEOUT',
  /** The Docker engine refused or failed: no image of that name, a container it could not create. */
  DOCKER_FAILED: 'ROLLER_DOCKER_FAILED',
  /** The harness left no native session. */
  NO_RAW_TRACE: 'ROLLER_NO_RAW_TRACE',
  /** Reprocessing a sample failed. */
  REPROCESS_FAILED: 'ROLLER_REPROCESS_FAILED',
  /** A reprocess output is already there (never overwritten). */
  REPROCESS_OUTPUT_EXISTS: 'ROLLER_REPROCESS_OUTPUT_EXISTS',
  /** The worker projecting a sample died. */
  REPROCESS_WORKER_DIED: 'ROLLER_REPROCESS_WORKER_DIED',
  /** A sample failed in a way no other code names (a bug, reported with its message). */
  SAMPLE_FAILED: 'ROLLER_SAMPLE_FAILED',
  /** The harness wrote more than one root session for one task. */
  SEVERAL_SESSIONS: 'ROLLER_SEVERAL_SESSIONS',
  /** roller merge refused its parts (other locks, an index missing or twice): nothing was written. */
  MERGE_REFUSED: 'ROLLER_MERGE_REFUSED',
  /** The job queue (Redis) failed or a queued sample could not run (another lock, a worker's setup). */
  QUEUE_FAILED: 'ROLLER_QUEUE_FAILED',
  /** A service roller was pointed at did not answer or refused (Redis, sbatch, an OTLP collector): exit 69. */
  SERVICE_UNAVAILABLE: 'ROLLER_SERVICE_UNAVAILABLE',
  /** A response stream broke its protocol (an event out of place, a frame that is not JSON). */
  STREAM_ANOMALY: 'ROLLER_STREAM_ANOMALY',
  /** The task output holds files roller does not copy. */
  UNSAFE_OUTPUT: 'ROLLER_UNSAFE_OUTPUT',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Where a piece of data came from, so an error can point at it. */
export interface Origin {
  file?: string;
  /** 1-based line number in `file`. */
  line?: number;
  /** Byte offset of the start of the record in `file`. */
  offset?: number;
}

export class RollerError extends Error {
  override readonly name = 'RollerError';
  readonly code: ErrorCode;
  readonly origin: Origin | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; origin?: Origin } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.origin = options.origin;
  }
}

export function isRollerError(err: unknown, code?: ErrorCode): err is RollerError {
  return err instanceof RollerError && (code === undefined || err.code === code);
}

/** `file:line` (or just `file`) for messages. */
export function describeOrigin(origin: Origin | undefined): string {
  if (!origin?.file) return '<input>';
  return origin.line === undefined ? origin.file : `${origin.file}:${origin.line}`;
}

/** The reason an AbortSignal was aborted, as an Error to rethrow. */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new RollerError(ErrorCode.PIPELINE_ABORTED, `pipeline aborted: ${String(reason ?? 'no reason given')}`);
}
