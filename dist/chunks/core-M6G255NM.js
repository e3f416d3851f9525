import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{endGroup,error,getInput,guardOutput,info,setFailed,setOutput,setSecret,startGroup,summary,warning}from"./chunk-2YB7DTBD.js";import"./chunk-4O56WVFB.js";import"./chunk-IEF6XIED.js";export{endGroup,error,getInput,guardOutput,info,setFailed,setOutput,setSecret,startGroup,summary,warning};
