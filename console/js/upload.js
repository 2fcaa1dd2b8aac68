// Uploads: files or whole folders, dropped or picked, each through a
// signed upload URL (POST /documents/upload, then PUT of the bytes with
// XMLHttpRequest for its progress events), three at a time, with a
// progress bar per file and one for the batch. The bytes stream from
// disk: nothing reads a file into memory.
import { h, clear, fmtBytes } from "./dom.js";
import { api, upload } from "./api.js";
import { siteQuery, errorText } from "./ctx.js";
import { choose } from "./dialog.js";
import { t } from "../i18n/index.js";

const PARALLEL = 3;
const enc = encodeURIComponent;

// findByPath is the id of the document at path, or null (POST /search
// with meta.path: an exact path, one request).
export async function findByPath(path) {
  const out = await api("POST", "/search", { query: siteQuery(), body: { query: { meta: { path } } } });
  const d = (out.documents || [])[0];
  return d && d.path === path ? d.documentId : null;
}

// freeName is the first "name (2).ext", "name (3).ext"... not taken in
// the folder, so "keep both" never leaves the API's `name (<id>).ext`.
export async function freeName(path) {
  const slash = path.lastIndexOf("/");
  const dir = path.slice(0, slash + 1), file = path.slice(slash + 1);
  const dot = file.lastIndexOf(".");
  const [stem, ext] = dot > 0 ? [file.slice(0, dot), file.slice(dot)] : [file, ""];
  for (let i = 2; i < 1000; i++) {
    const p = `${dir}${stem} (${i})${ext}`;
    if (!(await findByPath(p))) return p;
  }
  return path; // the API renames it then
}

// conflicts asks what to do with a file whose name is taken in the
// folder: a new version of the document there, both kept (the new one
// named "name (2).ext"), or not uploaded; "the same for the others"
// answers the rest of the batch.
function conflicts() {
  let always = null;
  return async (rel) => {
    if (always) return always;
    const { value, all } = await choose({
      id: "upload-conflict", title: t("upload.conflictTitle"), text: t("upload.conflictText", { name: rel }),
      choices: [{ value: "version", label: t("upload.asVersion"), primary: true }, { value: "both", label: t("upload.keepBoth") },
        { value: "skip", label: t("upload.skip") }],
      cancel: "skip", remember: t("upload.sameForOthers"),
    });
    if (all) always = value;
    return value;
  };
}

// filesOf collects {file, rel} from a drop, walking dropped folders.
async function filesOf(dt) {
  const out = [];
  const entries = [];
  for (const item of dt.items || []) {
    const e = item.webkitGetAsEntry && item.webkitGetAsEntry();
    if (e) entries.push(e);
  }
  if (!entries.length || entries.every((e) => e.isFile)) {
    for (const f of dt.files) out.push({ file: f, rel: f.webkitRelativePath || f.name });
    return out;
  }
  const walk = async (entry, prefix) => {
    if (entry.isFile) {
      const f = await new Promise((res, rej) => entry.file(res, rej));
      out.push({ file: f, rel: prefix + f.name });
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
        if (!batch.length) break;
        for (const c of batch) await walk(c, prefix + entry.name + "/");
      }
    }
  };
  for (const e of entries) await walk(e, "");
  return out;
}

export function uploader(folder, onDone) {
  const list = h("ul.uploads#uploads", { "aria-label": t("upload.list") });
  const batchBar = h("progress#batch-progress", { max: 1, value: 0, "aria-label": t("upload.batch") });
  const batchText = h("span#batch-text");
  const batch = h("div.batch", { hidden: true }, h("span", t("upload.batch")), " ", batchBar, " ", batchText);
  const pick = h("input#file-input.sr", { type: "file", multiple: true });
  const pickDir = h("input#dir-input.sr", { type: "file", multiple: true, webkitdirectory: true });
  const zone = h("div.dropzone#dropzone", { "aria-describedby": "dropzone-help" },
    h("p#dropzone-help", t("upload.drop")),
    pick, h("label.button", { for: "file-input" }, t("upload.pickFiles")), " ",
    pickDir, h("label.button", { for: "dir-input" }, t("upload.pickFolder")));

  async function run(items) {
    if (!items.length) return;
    const total = items.reduce((s, i) => s + i.file.size, 0) || 1;
    const done = new Map();
    let finished = 0, failed = 0, skipped = 0;
    batch.hidden = false;
    const update = () => {
      const sent = [...done.values()].reduce((a, b) => a + b, 0);
      batchBar.value = sent / total;
      batchText.textContent = t("upload.progress", { done: finished, n: items.length, bytes: fmtBytes(sent), size: fmtBytes(total) });
    };
    const rows = items.map((it, i) => {
      const bar = h("progress", { max: 1, value: 0, "aria-label": it.rel });
      const state = h("span.state", t("upload.waiting"));
      const li = h("li", { dataset: { file: it.rel } }, h("span.name", it.rel), " ", bar, " ", state);
      list.append(li);
      return { ...it, bar, state, li, i };
    });
    update();
    const queue = rows.slice();
    const ask = conflicts();
    const worker = async () => {
      for (let r = queue.shift(); r; r = queue.shift()) {
        r.state.textContent = t("upload.sending");
        try {
          let path = (folder ? folder + "/" : "") + r.rel;
          let url = null;
          const existing = await findByPath(path);
          if (existing) {
            const choice = await ask(r.rel);
            if (choice === "skip") {
              r.state.textContent = t("upload.skipped");
              r.li.classList.add("skipped");
              skipped++;
              finished++;
              done.set(r.i, r.file.size);
              update();
              continue;
            }
            if (choice === "version") {
              url = (await api("GET", `/documents/${enc(existing)}/upload`, { query: siteQuery({ contentLength: r.file.size }) })).url;
              r.asVersion = true;
            } else {
              path = await freeName(path);
              r.renamed = path.split("/").pop();
            }
          }
          if (!url) {
            const body = { path };
            if (r.file.type) body.contentType = r.file.type;
            url = (await api("POST", "/documents/upload", { query: siteQuery({ contentLength: r.file.size }), body })).url;
          }
          await upload(url, r.file, (loaded) => { r.bar.value = loaded / (r.file.size || 1); done.set(r.i, loaded); update(); });
          r.bar.value = 1;
          r.state.textContent = r.asVersion ? t("upload.doneVersion") : r.renamed ? t("upload.doneAs", { name: r.renamed }) : t("upload.done");
          r.li.classList.add("ok");
        } catch (e) {
          failed++;
          r.state.textContent = errorText(e);
          r.li.classList.add("failed");
        }
        finished++;
        done.set(r.i, r.file.size);
        update();
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, rows.length) }, worker));
    const sent = items.length - failed - skipped;
    batchText.textContent = failed ? t("upload.someFailed", { n: failed }) : skipped ? t("upload.someSkipped", { ok: sent, n: skipped }) : t("upload.allDone", { n: items.length });
    onDone();
  }

  zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", async (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    clear(list);
    run(await filesOf(e.dataTransfer));
  });
  for (const input of [pick, pickDir]) {
    input.addEventListener("change", () => {
      clear(list);
      run([...input.files].map((f) => ({ file: f, rel: f.webkitRelativePath || f.name })));
      input.value = "";
    });
  }
  return h("section.upload", { "aria-label": t("upload.title") }, zone, batch, list);
}
