import { fork } from "node:child_process";
import * as path from "node:path";

interface Job { id: number; values: number[] }

const job: Job = { id: 7, values: [1, 2, 3] };
const child = fork(path.join(__dirname, "child.ts"));
child.send(job);
child.on("message", (total: number) => {
  console.log(`job ${job.id}: ${total}`);
  child.disconnect();
});
