/**
 * A value sealed by the key-file box as it was before sealed values named their key (commit
 * 94c6b3e, format `keyfile:<base64url iv|tag|ciphertext>`), with the key that sealed it. Written by
 * that code, not by hand: databases in the field hold such values, and they must keep opening.
 */
export const V1_SEALED = {
  /** The key file's content (base64url of 32 bytes). */
  key: 'kztRS0yUvtY7s4g_2M7xGl0cD9HnzkBGcJStRIhG7aI',
  sealed: 'keyfile:5m-SDde44A3vqQl0xgedVymgpymbCz47EZRBNcyTGgt-85iIm4PuxYi9hMQCz_D4yhT3Y9er2IUFQzIWIiP9M67MrKfy4bCNCJwx',
  plain: 'secret sealed by the format before key ids (v1)',
} as const;
