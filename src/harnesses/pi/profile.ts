/** The profile that enables the example sub-agent extension Pi ships (lock.json harness_profile). */
export const PI_SUBAGENT_PROFILE = 'pi-example-subagent-extension';
