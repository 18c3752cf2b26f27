// The longest delay a timer holds. `setTimeout` keeps a delay in 32 bits: a longer one fires at
// once in browsers and after 1 ms in Node, so a delay the app or the engine asks for is cut to
// this (about 24.8 days) before it is armed.

const MAX_TIMER_MS = 2_147_483_647;

/** `ms` as a timer can hold it: at most MAX_TIMER_MS. */
export const timerDelay = (ms) => Math.min(ms, MAX_TIMER_MS);
