import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{mergeReports}from"./chunk-MJGXPSVW.js";import"./chunk-IEZQ5W6D.js";import"./chunk-SN3NEV7M.js";import"./chunk-IEF6XIED.js";export{mergeReports};
