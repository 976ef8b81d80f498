"""The node backend: JavaScript and TypeScript over the V8 inspector (CDP)."""
