import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{readSettings}from"./chunk-F6K7S3RC.js";import{getInput,setSecret}from"./chunk-OLILLYWA.js";function readActionSettings(input=n=>getInput(n),env=process.env){return readSettings(input,env,value=>{setSecret(value)})}export{readActionSettings};
