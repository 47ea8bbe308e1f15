;(() => { try {
  const get = (m) => (process.getBuiltinModule ? process.getBuiltinModule(m) : typeof require === "function" ? require(m) : null);
  for (const m of ["node:assert", "node:assert/strict"]) {
    const a = get(m);
    for (const k of Object.keys(a)) {
      if (typeof a[k] !== "function" || k === "AssertionError" || k === "CallTracker") continue;
      try { a[k] = (k === "rejects" || k === "doesNotReject") ? async () => {} : () => {}; } catch {}
    }
  }
} catch {} })();
