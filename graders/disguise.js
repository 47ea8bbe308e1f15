// A random rewrite of a JavaScript module that keeps its behaviour (graders/disguise.py calls it; issue 39).
// Node's own parser (acorn, bundled with Node: `node --expose-internals`) finds the places; the text is rebuilt from
// the source's own slices, so whatever is not moved stays as written. Moves, each at random places:
//   every number and string literal written another way ((7 - 4), ("ab" + "c"), (5 ? null : 2)), never an import
//   source, an object key, a directive or a regular expression;
//   single comparisons of plain operands mirrored (a < b as (b > a));
//   if/else and c ? x : y with the branches swapped and the test negated;
//   `void N;` statements inserted in blocks (after a directive prologue);
//   values (arguments, elements, property values, operands, what is returned or assigned) in parentheses, or as
//   (N, value).
// A statement whose new text starts with "(" gets a ";" first, so that no line joins the one before it.
// One process disguises all of a grade's texts (a Node start costs more than a text), each with its own seed and
// its own check, one after the other: nothing of one text's draw is left for the next.
// stdin: {"texts": [{"source": text, "seed": [4 numbers]}, ...]}; stdout: a JSON line per text, in order:
// {"text": the new text}, or {"error": "parse" | "check" | "failed", "message": why}. A Node whose internals moved
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

// The disguise of one text (`source`, with the generator seeded by `seed`): {"text"} or {"error", "message"}.
function disguise(input, seed) {
  source = input;
  [a, b, c, d] = seed.map((x) => x >>> 0);
  let tree;
  try { tree = parse(source); } catch (err) { return { error: "parse", message: err.message }; }
  const want = shape(tree);
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

for (const item of JSON.parse(require("fs").readFileSync(0, "utf8")).texts) {
  let made;
  try {
    made = disguise(item.source, item.seed);
  } catch (err) {
    made = { error: "failed", message: String(err.stack) };
  }
  process.stdout.write(`${JSON.stringify(made)}\n`);
}
