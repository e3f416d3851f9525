import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{guardCliOutput,guardStream}from"./chunk-XPXWJQO6.js";import"./chunk-IEF6XIED.js";export{guardCliOutput,guardStream};
