/** Kinds of server-made ids; the prefix tells an operator what an id names at a glance. */
export const ID_PREFIX = {
  conversation: 'c_',
  message: 'm_',
  reply: 'r_',
  suggestion: 's_',
  note: 'n_',
  request: 'req_',
} as const;

export type IdKind = keyof typeof ID_PREFIX;
