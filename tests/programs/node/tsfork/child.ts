interface Job { id: number; values: number[] }

function total(job: Job): number {
  let sum = 0;
  for (const value of job.values) {
    sum += value * job.id;
  }
  return sum;
}

process.on("message", (job: Job) => {
  const result: number = total(job);
  process.send?.(result);
});
