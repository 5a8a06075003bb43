// Types of scripts/start-env.js (plain JavaScript, read by `npm start`'s entry before TypeScript loads).
export declare const START_ENV: Readonly<Record<string, string>>;
