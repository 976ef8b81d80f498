"""asyncio tasks awaiting each other: "fetcher" awaits an Event through two coroutines, "consumer" a Queue, "parent"
awaits the task "child", which stops at a marked line after a step of its own; main awaits a gather of them all.
Without an argument the child waits for good instead, so the loop sits idle in its selector (C code) once main has
printed "all waiting"."""
import asyncio
import sys


async def wait_for(event):
    await event.wait()


async def fetch(event):
    await wait_for(event)


async def consume(queue):
    return await queue.get()


async def child(event):
    await asyncio.sleep(0)
    if sys.argv[1:]:
        done = "child ran"  # child stops here
        print(done)
    else:
        await event.wait()
    return 1


async def parent(event):
    task = asyncio.create_task(child(event), name="child")
    return await task


async def main():
    event, queue = asyncio.Event(), asyncio.Queue()
    tasks = [asyncio.create_task(fetch(event), name="fetcher"), asyncio.create_task(consume(queue), name="consumer"),
             asyncio.create_task(parent(event), name="parent")]
    await asyncio.sleep(0)
    if not sys.argv[1:]:
        for _ in range(4):  # each task runs to its first await, the child to its Event.wait()
            await asyncio.sleep(0)
        print("all waiting", flush=True)
    await asyncio.gather(*tasks[2:])
    event.set()
    await queue.put(1)
    await asyncio.gather(*tasks)


asyncio.run(main())
