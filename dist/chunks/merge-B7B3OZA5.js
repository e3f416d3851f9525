import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{mergeReports}from"./chunk-KJH77I4K.js";import"./chunk-IEZQ5W6D.js";import"./chunk-XRC3TGLE.js";import"./chunk-IEF6XIED.js";export{mergeReports};
