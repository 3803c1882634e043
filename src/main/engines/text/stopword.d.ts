// The package ships no types; only its word lists are used.
declare module 'stopword' {
  export const eng: string[];
  export const zho: string[];
}
