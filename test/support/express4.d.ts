/** The `express4` dev dependency is Express 4 under an npm alias; its API is typed as `express`. */
declare module 'express4' {
  export * from 'express';
  export { default } from 'express';
}
