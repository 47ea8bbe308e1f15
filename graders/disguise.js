// A random rewrite of a JavaScript module that keeps its behaviour (graders/disguise.py calls it; issue 39).
// Node's own parser (acorn, bundled with Node: `node --expose-internals`) finds the places; the text is rebuilt from
// the source's own slices, so whatever is not moved stays as written. Moves, each at random places:
//   every number and string literal written another way ((7 - 4), ("ab" + "c"), (5 ? null : 2)), never an import
//   source, an object key, a directive or a regular expression;
//   single comparisons of plain operands mirrored (a < b as (b > a));
//   if/else and c ? x : y with the branches swapped and the test negated;
//   `void N;` statements inserted in blocks (after a directive prologue);
//   comments dropped (a "#!" line kept);
//   values (arguments, elements, property values, operands, what is returned or assigned) in parentheses, or as
//   (N, value).
// A statement whose new text starts with "(" gets a ";" first, so that no line joins the one before it.
// One process disguises all of a grade's texts (a Node start costs more than a text), each with its own seed and
// its own check, one after the other: nothing of one text's draw is left for the next.
// stdin: {"texts": [{"source": text, "seed": [4 numbers], "group": index}, ...], "groups": [[text, ...], ...]}
// ("group", "groups": the grade's texts of one module, for the decoys below); stdout: a JSON line per text, in
// order: {"text": the new text}, or {"error": "parse" | "check" | "failed", "message": why}; the first text of a
// group some of whose decoys were dropped also says why ("dropped": [lines]). A Node whose internals moved
// fails at the require below ("Cannot find module") before any line is written.
"use strict";
const acorn = require("internal/deps/acorn/acorn/dist/acorn");

let source = "";
let [a, b, c, d] = [0, 0, 0, 0];
function random() { // sfc32, seeded by the caller's fresh randomness
  a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
  let t = (a + b) | 0;
  a = b ^ (b >>> 9); b = (c + (c << 3)) | 0; c = (c << 21) | (c >>> 11);
  d = (d + 1) | 0; t = (t + d) | 0; c = (c + t) | 0;
  return (t >>> 0) / 4294967296;
}
const chance = (odds) => random() < odds;
const number = () => 2 + Math.floor(random() * 9998);

function parse(text) {
  for (const sourceType of ["module", "script"]) {
    try {
      return acorn.parse(text, { ecmaVersion: "latest", sourceType, allowHashBang: true,
                                 allowReturnOutsideFunction: sourceType === "script" });
    } catch (err) { if (sourceType === "script") throw err; }
  }
}

function children(node) {
  const found = [];
  for (const key of Object.keys(node)) {
    const value = node[key];
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child && typeof child.type === "string" && typeof child.start === "number") found.push(child);
    }
  }
  return found.sort((x, y) => x.start - y.start);
}

const PLAIN = new Set(["Identifier", "Literal", "ThisExpression"]);
function plain(node) {
  if (PLAIN.has(node.type)) return !node.regex;
  return node.type === "MemberExpression" && !node.computed && !node.optional && plain(node.object);
}
const MIRRORED = { "<": ">", ">": "<", "<=": ">=", ">=": "<=", "===": "===", "!==": "!==", "==": "==", "!=": "!=" };

function literal(node) {
  const v = node.value;
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 && chance(0.8)) {
    const key = number();
    return v >= key && chance(0.5) ? `(${v - key} + ${key})` : `(${v + key} - ${key})`;
  }
  if (typeof v === "string" && [...v].length >= 2 && chance(0.8)) {
    const points = [...v];
    const cut = 1 + Math.floor(random() * (points.length - 1));
    return `(${JSON.stringify(points.slice(0, cut).join(""))} + ${JSON.stringify(points.slice(cut).join(""))})`;
  }
  return `(${number()} ? ${source.slice(node.start, node.end)} : ${number()})`;
}

// Where a literal must stay as written.
function fixedLiteral(node, parent) {
  if (node.regex || node.bigint !== undefined) return true;
  if (!parent) return false;
  if (["ImportDeclaration", "ExportNamedDeclaration", "ExportAllDeclaration", "ImportExpression"].includes(parent.type)
      && parent.source === node) return true;
  if (["Property", "MethodDefinition", "PropertyDefinition"].includes(parent.type) && parent.key === node
      && !parent.computed) return true;
  if (parent.type === "ExpressionStatement" && parent.directive !== undefined) return true;
  if (["ImportSpecifier", "ExportSpecifier", "ImportNamespaceSpecifier", "ImportDefaultSpecifier"]
    .includes(parent.type)) return true;
  return false;
}

const LEAVES = new Set(["TemplateElement", "ImportSpecifier", "ExportSpecifier", "ImportDefaultSpecifier",
                        "ImportNamespaceSpecifier"]);

// Value places: an expression there may be written `(N, E)` or `(E)` (never a callee, a target or a chain's link).
function valuePlace(node, parent) {
  if (!parent || parent.inPattern || ["SpreadElement", "PrivateIdentifier"].includes(node.type)
      || /Pattern$/.test(node.type)) return false;
  switch (parent.type) {
    case "Property": return parent.value === node && !parent.shorthand && !parent.method && parent.kind === "init";
    case "CallExpression": case "NewExpression": return parent.arguments.includes(node);
    case "ArrayExpression": return parent.elements.includes(node);
    case "ReturnStatement": return parent.argument === node;
    case "VariableDeclarator": return parent.init === node;
    case "AssignmentExpression": return parent.right === node;
    case "BinaryExpression": case "LogicalExpression": return true;
    default: return false;
  }
}

function wrapped(made) {
  const form = random();
  if (form < 0.6) return `(${number()}, ${made})`;
  return form < 0.85 ? `(${made})` : `((${made}))`;
}

function text(node, parent) {
  const made = moved(node, parent);
  return valuePlace(node, parent) ? wrapped(made) : made;
}

function moved(node, parent) {
  if (node.type === "Literal") return fixedLiteral(node, parent) ? source.slice(node.start, node.end) : literal(node);
  if (node.type === "Property" && node.shorthand) return source.slice(node.start, node.end);
  if (LEAVES.has(node.type)) return source.slice(node.start, node.end);  // their parts may share one range
  const parts = children(node);
  const inChain = node.type === "ChainExpression" || (parent && parent.inChain);
  if (inChain) for (const child of parts) child.inChain = true;  // (a?.b).c is not a?.b.c: no parens in a chain
  if (/Pattern$/.test(node.type)) for (const child of parts) child.inPattern = true;  // what it binds is no value
  const made = new Map(parts.map((child) => [child, inChain ? moved(child, node) : text(child, node)]));
  let out = "";
  let at = node.start;
  const statements = node.type === "BlockStatement" || node.type === "Program" || node.type === "StaticBlock";
  let prologue = statements;
  for (const child of parts) {
    out += source.slice(at, child.start);
    if (prologue && !(child.type === "ExpressionStatement" && child.directive !== undefined)) prologue = false;
    if (statements && !prologue && child.type !== "ImportDeclaration" && chance(0.3)) out += `void ${number()};\n`;
    out += made.get(child);
    at = child.end;
  }
  out += source.slice(at, node.end);
  const own = (child) => made.get(child);
  if (node.type === "BinaryExpression" && MIRRORED[node.operator] && plain(node.left) && plain(node.right)
      && chance(0.5)) {
    return `(${own(node.right)} ${MIRRORED[node.operator]} ${own(node.left)})`;
  }
  const declaration = (n) => n && /Declaration$/.test(n.type);
  if (node.type === "IfStatement" && !declaration(node.consequent) && !declaration(node.alternate) && chance(0.5)) {
    const otherwise = node.alternate ? own(node.alternate) : "";
    return `if (!(${own(node.test)})) {\n${otherwise}\n} else {\n${own(node.consequent)}\n}`;
  }
  if (node.type === "ConditionalExpression" && chance(0.5)) {
    return `(!(${own(node.test)}) ? ${own(node.alternate)} : ${own(node.consequent)})`;
  }
  const list = parent && ["BlockStatement", "Program", "StaticBlock", "SwitchCase"].includes(parent.type);
  if (node.type === "ExpressionStatement" && list && /^[([`]/.test(out)) return `;${out}`;
  return out;
}

function shape(tree) {
  const names = [];
  for (const node of tree.body) {
    if (node.type === "ExportNamedDeclaration" || node.type === "ExportDefaultDeclaration") {
      names.push(`export:${node.type}`);
      for (const s of node.specifiers || []) names.push(`export:${(s.exported || s.local).name ?? s.exported.value}`);
      if (node.declaration) names.push(...declared(node.declaration));
    } else names.push(...declared(node));
  }
  return JSON.stringify([...new Set(names)].sort());
}

function declared(node) {
  if (node.type === "FunctionDeclaration" || node.type === "ClassDeclaration") return node.id ? [node.id.name] : [];
  if (node.type === "VariableDeclaration") {
    return node.declarations.flatMap((d) => d.id.type === "Identifier" ? [d.id.name] : ["pattern"]);
  }
  if (node.type === "ImportDeclaration") return node.specifiers.map((s) => s.local.name);
  return [];
}

// ---------------------------------------------------------------- decoys (graders/decoys.py says why)
// A grade's texts of one module form a group. Every part in which they differ (a function's or a method's body, a
// run of top-level statements) gets dead copies of every version of it in every text, T of each in all (the live
// one counts), T uniform on 1..K drawn afresh (K is 1: once): a search for a version's text, or a count of it, is
// alike on all.
// A body's copy is `;(() => { ... });` (`async`, `function*` as the function is) at a random place of the live
// body: never called, it binds nothing, and an arrow keeps `this` and `super` legal. A statement run's copy is
// `;if (0) { (async () => { ... }); }` at a random place of the top level (an `export` kept out of the copy).
// The copies keep the source's own lines, so their indentation is the live version's.
const K = 1; // every version exactly once in every text: counts equal, the texts shortest (decoys.py: K)

function declOf(stmt) {
  const d = /^Export(Named|Default)Declaration$/.test(stmt.type) && stmt.declaration ? stmt.declaration : stmt;
  return (d.type === "FunctionDeclaration" || d.type === "ClassDeclaration") && d.id ? d : null;
}

function keyOf(src, stmt) {
  const d = declOf(stmt);
  return d ? `decl ${d.type} ${d.id.name}` : `stmt ${src.slice(stmt.start, stmt.end)}`;
}

function opcodes(x, y) { // equal runs of a longest common subsequence, and what lies between: [tag, i1, i2, j1, j2]
  const n = x.length, m = y.length;
  const l = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) l[i][j] = x[i] === y[j] ? l[i + 1][j + 1] + 1 : Math.max(l[i + 1][j], l[i][j + 1]);
  }
  const codes = [];
  let i = 0, j = 0, ei = 0, ej = 0;
  const flush = (i2, j2) => {
    if (i2 > ei || j2 > ej) codes.push(["replace", ei, i2, ej, j2]);
  };
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      flush(i, j);
      const last = codes[codes.length - 1];
      if (last && last[0] === "equal" && last[2] === i && last[4] === j) { last[2]++; last[4]++; }
      else codes.push(["equal", i, i + 1, j, j + 1]);
      i++; j++; ei = i; ej = j;
    } else if (l[i + 1][j] >= l[i][j + 1]) i++;
    else j++;
  }
  flush(n, m);
  return codes;
}

function mapped(codes, at, size, end) { // where the base's statement boundary `at` falls in another text
  const equal = codes.filter((c) => c[0] === "equal");
  for (const [, i1, i2, j1] of equal) if (end ? i1 <= at && at < i2 : i1 < at && at <= i2) return j1 + at - i1;
  const added = codes.filter((c) => c[0] !== "equal" && c[1] === at && c[2] === at); // an insertion: the unit's
  if (end && added.length) return added[added.length - 1][4];
  for (const [, i1, i2, j1] of equal) if (at === (end ? i2 : i1)) return j1 + at - i1;
  return end ? size : 0;
}

function distinct(runs) {
  const versions = [];
  const live = runs.map((run) => {
    if (!versions.includes(run)) versions.push(run);
    return versions.indexOf(run);
  });
  return { versions, live };
}

function stmtCopy(src, stmts) { // a run of top-level statements as a copy's text, or null when it cannot be one
  const parts = [];
  for (const stmt of stmts) {
    if (/^(Import|ExportAll)Declaration$/.test(stmt.type)) return null;
    if (/^Export(Named|Default)Declaration$/.test(stmt.type)) {
      if (!stmt.declaration) return null;
      const d = stmt.declaration;
      parts.push(/Declaration$/.test(d.type) ? src.slice(d.start, d.end) : `(${src.slice(d.start, d.end)});`);
    } else parts.push(src.slice(stmt.start, stmt.end));
  }
  return parts.join("\n");
}

function plan(sources) {
  const trees = sources.map((src) => parse(src));
  const bodies = trees.map((t) => t.body);
  const base = bodies[0].map((s) => keyOf(sources[0], s));
  const codes = bodies.map((body, t) => opcodes(base, body.map((s) => keyOf(sources[t], s))));
  const aligned = codes.map((c) => {
    const a = new Map();
    for (const [tag, i1, i2, j1] of c) if (tag === "equal") for (let i = i1; i < i2; i++) a.set(i, j1 + i - i1);
    return a;
  });
  const spans = [];
  for (const c of codes) for (const [tag, i1, i2] of c) if (tag !== "equal") spans.push([i1, i2]);
  const units = [];
  const slice = (t, node) => sources[t].slice(node.start, node.end);
  base.forEach((key, i) => {
    if (!key.startsWith("decl ") || !aligned.every((a) => a.has(i))) return;
    const stmts = aligned.map((a, t) => bodies[t][a.get(i)]);
    const decls = stmts.map(declOf);
    const header = (t, from, body) => sources[t].slice(from, body.start);
    const differ = (list) => new Set(list).size > 1;
    if (differ(decls.map((d, t) => header(t, stmts[t].start, d.body)))) { spans.push([i, i + 1]); return; }
    const functionUnit = (fns, where) => ({
      body: true, where, ...distinct(fns.map((f, t) => sources[t].slice(f.body.start + 1, f.body.end - 1))),
      isAsync: fns[0].async, generator: fns[0].generator });
    if (decls[0].type === "FunctionDeclaration") {
      if (differ(decls.map((d, t) => slice(t, d)))) units.push(functionUnit(decls, aligned.map((a) => [a.get(i)])));
      return;
    }
    const elements = decls.map((d) => d.body.body);
    const found = [];
    for (let e = 0; e < elements[0].length; e++) {
      const els = elements.map((list) => list[e]);
      if (els.some((el) => !el) || differ(els.map((el, t) => el && slice(t, el)))) {
        const methods = els.every((el) => el && el.type === "MethodDefinition" && el.value.body);
        if (!methods || differ(els.map((el, t) => header(t, el.start, el.value.body)))) {
          spans.push([i, i + 1]); return;
        }
        found.push(functionUnit(els.map((el) => el.value), aligned.map((a) => [a.get(i), e])));
      }
    }
    if (elements.some((list) => list.length !== elements[0].length)) { spans.push([i, i + 1]); return; }
    units.push(...found);
  });
  const merged = [];
  for (const [start, end] of spans.sort((x, y) => x[0] - y[0] || x[1] - y[1])) {
    const last = merged[merged.length - 1];
    if (last && (start < last[1] || (start === last[1] && (start === end || last[0] === last[1])))) {
      last[1] = Math.max(last[1], end);
    } else merged.push([start, end]);
  }
  const dropped = [];
  for (const [start, end] of merged) {
    const runs = bodies.map((body, t) => {
      const j1 = mapped(codes[t], start, body.length, false), j2 = mapped(codes[t], end, body.length, true);
      return stmtCopy(sources[t], body.slice(j1, j2));
    });
    if (runs.includes(null)) { dropped.push("a run of top-level statements holds an import or export"); continue; }
    if (new Set(runs).size > 1) units.push({ body: false, ...distinct(runs) });
  }
  if (sources.every((src, t) => !checkedCopies(src, trees[t], units, t, true))) return { units, dropped };
  const kept = units.filter((unit) => { // one that fails: each on its own, to keep the others
    for (let t = 0; t < sources.length; t++) {
      const problem = checkedCopies(sources[t], trees[t], [unit], t, true);
      if (problem) { dropped.push(`a part that differs between the texts gets no decoys: ${problem}`); return false; }
    }
    return true;
  });
  return { units: kept, dropped };
}

function located(tree, unit, t) { // the statements a unit's copies go among, and where that list ends
  if (!unit.body) return { list: tree.body, end: tree.end };
  let node = declOf(tree.body[unit.where[t][0]]);
  if (unit.where[t].length > 1) node = node.body.body[unit.where[t][1]].value;
  return { list: node.body.body, end: node.body.end - 1 };
}

function decoyed(src, tree, units, t, once) { // `src` with its copies of `units` (`once`: one of each version)
  const edits = [];
  for (const unit of units) {
    const { list, end } = located(tree, unit, t);
    let first = 0;
    while (first < list.length && list[first].type === "ExpressionStatement" && list[first].directive !== undefined) {
      first++;
    }
    unit.versions.forEach((version, v) => {
      const times = once ? 1 : 1 + Math.floor(random() * K) - (unit.live[t] === v ? 1 : 0);
      for (let n = 0; n < times; n++) {
        const k = first + Math.floor(random() * (list.length - first + 1));
        const fn = unit.body ? (unit.generator ? "function* ()" : "() =>") : "() =>";
        const made = unit.body ? `;(${unit.isAsync ? "async " : ""}${fn} {\n${version}\n});\n`
          : `;if (0) { (async ${fn} {\n${version}\n}); }\n`;
        edits.push([k < list.length ? list[k].start : end, made]);
      }
    });
  }
  edits.sort((x, y) => y[0] - x[0]);
  let out = src;
  for (const [at, made] of edits) out = out.slice(0, at) + made + out.slice(at);
  return out;
}

function checkedCopies(src, tree, units, t, once) { // why the copies cannot go in ("" when they can)
  const made = decoyed(src, tree, units, t, once);
  let again;
  try { again = parse(made); } catch (err) { return `it does not parse: ${err.message}`; }
  if (again.sourceType !== tree.sourceType) return "it parses as another kind of source";
  return shape(again) === shape(tree) ? "" : "its top-level names differ";
}

// The disguise of one text (`source`, with the generator seeded by `seed`; `group`: its group's plan and its index
// in it): {"text"} or {"error", "message"}.
function disguise(input, seed, group) {
  source = input;
  [a, b, c, d] = seed.map((x) => x >>> 0);
  let tree;
  try { tree = parse(source); } catch (err) { return { error: "parse", message: err.message }; }
  const want = shape(tree);
  if (group && group.plan.units.length) {
    let made = "";
    for (let attempt = 0; attempt < 8 && !made; attempt++) {
      const copies = decoyed(input, tree, group.plan.units, group.at, false);
      try {
        const again = parse(copies);
        if (again.sourceType === tree.sourceType && shape(again) === want) { made = copies; tree = again; }
      } catch (err) { /* drawn again */ }
    }
    if (!made) return { error: "check", message: "the text with its decoys failed its own check 8 times" };
    source = made;
  }
  for (let attempt = 0; attempt < 8; attempt++) {
    const head = source.startsWith("#!") ? source.slice(0, source.indexOf("\n") + 1) : "";
    const body = text(tree, null);
    const made = head && !body.startsWith("#!") ? head + body : body;
    let again;
    try { again = parse(made); } catch (err) { continue; }
    if (shape(again) === want) return { text: made };
  }
  return { error: "check", message: "the disguised text failed its own check 8 times" };
}

// The text without its comments (a "#!" line kept): a comment is the text's own, never disguised and never copied
// with a decoy, so one that only some texts have (a rewrite's note) or that sits by the live version of a top-level
// statement would tell the texts, or the live copy, apart. Each becomes the line breaks it held, or a space.
function uncommented(text) {
  for (const sourceType of ["module", "script"]) {
    const comments = [];
    try {
      acorn.parse(text, { ecmaVersion: "latest", sourceType, allowHashBang: true,
                          allowReturnOutsideFunction: sourceType === "script",
                          onComment: (block, value, start, end) => comments.push([start, end]) });
    } catch (err) { continue; }
    let out = text;
    for (const [start, end] of comments.reverse()) {
      if (start === 0 && text.startsWith("#!")) continue;
      const breaks = text.slice(start, end).match(/\r\n|[\n\r\u2028\u2029]/g);
      out = out.slice(0, start) + (breaks ? breaks.join("") : " ") + out.slice(end);
    }
    return out;
  }
  return text; // it does not parse: its disguise says so
}

const request = JSON.parse(require("fs").readFileSync(0, "utf8"));
request.groups = (request.groups || []).map((sources) => [...new Set(sources.map(uncommented))]);
for (const item of request.texts) item.source = uncommented(item.source);
const plans = request.groups.map((sources) => {
  try { return plan(sources); } catch (err) { // a text that does not parse (its own line says so), or a fault here
    return { units: [], dropped: [`the texts get no decoys: ${String(err.message).slice(0, 200)}`] };
  }
});
const said = new Set();
for (const item of request.texts) {
  let made;
  const group = Number.isInteger(item.group) ? plans[item.group] : null;
  try {
    made = disguise(item.source, item.seed,
                    group && { plan: group, at: request.groups[item.group].indexOf(item.source) });
  } catch (err) {
    made = { error: "failed", message: String(err.stack) };
  }
  if (group && group.dropped.length && !said.has(item.group)) {
    said.add(item.group);
    made.dropped = group.dropped;
  }
  process.stdout.write(`${JSON.stringify(made)}\n`);
}
