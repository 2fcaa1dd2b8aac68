// Scanner intake (GOVERN; API.md "Scanner intake"): the current site's
// intake profiles, set up here (POST, PUT and DELETE
// /sites/{siteId}/intakeProfiles): where documents go (a path template),
// what they get (tags, actions), what happens to a file already there,
// the attributes (keys from the site's attributes), the user and the
// groups (from lists) its documents are made with, and a watched folder;
// each with where it takes files (the upload
// address, the watched folder, the e-mail address, WebDAV for the profile
// named "webdav") and the recent failures it recorded
// (GET .../{name}/errors, the newest 100, newest first). "Test" sends a
// small file through the profile's upload address (POST
// /sites/{siteId}/intake/{name}), shows the document it made and deletes
// it again, then has the server check the watched folder and the e-mail
// address (POST .../{name}/test: the folder is there and takes files,
// mail to the address reaches the profile).
import { h, clear, fmtDate } from "../js/dom.js";
import { api, apiForm } from "../js/api.js";
import { state, can, status, errorText } from "../js/ctx.js";
import { canGovern, tabNav, field, submitting } from "../js/admin.js";
import { named } from "../js/words.js";
import { definitions } from "../js/attrs.js";
import { SITE_ROLES, groupOf, groupLabel } from "../js/groups.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;
const SOURCES = { FOLDER: "admin.intake.source.folder", POST: "admin.intake.source.post", SMTP: "admin.intake.source.smtp", WEBDAV: "admin.intake.source.webdav" };
const ACTIONS = ["OCR", "FULLTEXT", "ANTIVIRUS", "MALWARE_SCAN", "DOCUMENTTAGGING"];
const DUPLICATES = ["SKIP", "KEEP_BOTH", "VERSION"];
const DEFAULT_PATH = "Inbox/{yyyy}-{mm}/{source}/{filename}";

function source(s) {
  const k = SOURCES[String(s || "").toUpperCase()];
  return k ? t(k) : String(s || "");
}

// attrRows edits the attributes a profile gives each document: a row per
// attribute, its key chosen from the site's attributes (one the site no
// longer defines stays, named as it is), its value text (placeholders
// such as {sender} allowed: API.md "Scanner intake").
function attrRows(id, defs, given) {
  const list = h("ul.intake-attrs", { id: id + "-attrs" });
  let n = 0;
  const add = (a, focus) => {
    const i = n++;
    const keys = defs.map((d) => d.key);
    if (a && a.key && !keys.includes(a.key)) keys.push(a.key);
    const key = h("select", { id: `${id}-attr-${i}-key`, "aria-label": t("admin.intake.attrKey") },
      keys.map((k) => h("option", { value: k, selected: !!a && a.key === k }, k)));
    const value = h("input", { type: "text", id: `${id}-attr-${i}-value`, autocomplete: "off", "aria-label": t("admin.intake.attrValue"),
      value: a ? a.stringValue ?? (a.numberValue !== undefined ? String(a.numberValue) : "") : "" });
    const rm = h("button.small.remove-attr", { type: "button", onclick: () => { li.remove(); addBtn.focus(); } }, t("admin.intake.attrRemove"));
    const named = () => rm.setAttribute("aria-label", t("admin.intake.attrRemoveNamed", { key: key.value }));
    key.addEventListener("change", named);
    named();
    const li = h("li", key, " ", value, " ", rm);
    list.append(li);
    if (focus) key.focus();
  };
  const addBtn = h("button.small", { type: "button", id: id + "-attr-add", disabled: !defs.length, onclick: () => add(null, true) }, t("admin.intake.attrAdd"));
  for (const a of given || []) add(a, false);
  const read = () => [...list.children].map((li) => {
    const [k, v] = li.querySelectorAll("select, input");
    return { key: k.value, stringValue: v.value };
  }).filter((a) => a.key);
  const box = h("fieldset", h("legend", t("admin.intake.attributes")), list, addBtn,
    h("small.meta", { id: id + "-attrs-hint" }, defs.length ? t("admin.intake.attrHint") : t("admin.intake.attrNone")));
  return { box, read };
}

// groupBoxes chooses the groups a profile's documents are made as: the
// site's roles in words and the user's own teams, from a list; a group
// the profile has already (an identity provider's) stays on the list.
function groupBoxes(id, site, siteIds, given) {
  const own = SITE_ROLES.map((r) => groupOf(site, r));
  const teams = ((state.user && state.user.roles) || []).filter((r) => r !== "Admins" && !own.includes(r));
  const all = [...own, ...teams];
  for (const g of given || []) if (!all.includes(g)) all.push(g);
  const boxes = all.map((g, i) => h("input", { type: "checkbox", id: `${id}-group-${i}`, value: g, checked: (given || []).includes(g) }));
  const box = h("fieldset", { "aria-describedby": id + "-groups-hint" }, h("legend", t("admin.intake.groups")),
    boxes.map((b) => h("label.check", b, " ", groupLabel(b.value, siteIds))),
    h("small.meta", { id: id + "-groups-hint" }, t("admin.intake.groupsHint")));
  return { box, read: () => boxes.filter((b) => b.checked).map((b) => b.value) };
}

// why says in plain words why a file was not taken, from the server's
// own reason (which stays behind "Details" for whoever set it up).
const WHY = [
  [/\bempty\b|\b0 bytes\b/i, "admin.intake.why.empty"],
  [/virus|malware|infected/i, "admin.intake.why.virus"],
  [/too large|larger than|exceeds|maximum (content )?size|size limit/i, "admin.intake.why.tooLarge"],
  [/content.?type|kind of file|not an allowed type/i, "admin.intake.why.type"],
  [/maximum number of documents|document limit/i, "admin.intake.why.full"],
  [/attribute/i, "admin.intake.why.attribute"],
  [/permission|not allowed|forbidden|access|write to/i, "admin.intake.why.access"],
];
function why(text) {
  const hit = WHY.find(([re]) => re.test(String(text || "")));
  return t(hit ? hit[1] : "admin.intake.why.other");
}

// tagsText and tagsOf turn tags into lines "key=value" and back.
function tagsText(tags) { return (tags || []).map((x) => x.value ? x.key + "=" + x.value : x.key).join("\n"); }
function tagsOf(text) {
  return String(text).split("\n").map((l) => l.trim()).filter(Boolean).map((l) => {
    const i = l.indexOf("=");
    return i < 0 ? { key: l } : { key: l.slice(0, i).trim(), value: l.slice(i + 1).trim() };
  });
}

export default {
  path: /^\/admin\/intake$/,
  async render(ctx, main) {
    if (!canGovern()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    const site = state.site;
    const base = `/sites/${enc(site)}/intakeProfiles`;
    const body = h("div#intake");
    const formSlot = h("div#intake-form-slot");
    const testOut = h("div#intake-test", { role: "status" });

    // profileForm creates a profile (p null) or changes one.
    async function profileForm(p) {
      const id = "intake-form";
      // The site's attributes and, for an administrator, its users: the
      // lists the pickers offer.
      const [defs, users] = await Promise.all([
        definitions().then((d) => d.list, () => []),
        api("GET", "/users", { query: { limit: 60 } }).then((o) => (o.users || []).map((u) => u.username), () => []),
      ]);
      if (ctx.stale()) return;
      const siteIds = (state.sites || []).map((x) => x.siteId);
      const attrs = attrRows(id, defs, p && p.attributes);
      const groups = groupBoxes(id, site, siteIds, p && p.groups);
      const user = h("input", { type: "text", autocomplete: "off", list: id + "-users", value: p ? p.userId || "" : "", placeholder: state.user ? state.user.username : "" });
      const userList = h("datalist", { id: id + "-users" }, users.map((u) => h("option", { value: u })));
      const name = h("input", { type: "text", required: true, autocomplete: "off", pattern: "[a-z0-9][a-z0-9_-]{0,63}", value: p ? p.name : "", readonly: !!p });
      const path = h("input", { type: "text", autocomplete: "off", value: p ? p.pathTemplate || "" : "", placeholder: DEFAULT_PATH });
      const dup = h("select", DUPLICATES.map((d) => h("option", { value: d, selected: (p ? p.duplicates || "SKIP" : "SKIP") === d }, t("admin.intake.dup." + d))));
      const have = p ? (p.actions || []).map((a) => String(a.type).toUpperCase()) : ["OCR", "FULLTEXT"];
      const boxes = ACTIONS.map((a) => h("input", { type: "checkbox", id: id + "-act-" + a, value: a, checked: have.includes(a) }));
      const tags = h("textarea", { rows: 2 }, p ? tagsText(p.tags) : "");
      const wf = p && p.watchFolder;
      const watch = h("input", { type: "checkbox", id: id + "-watch", checked: !!(wf && wf.enabled !== false) });
      const f = submitting(h("form.panel.wide#" + id, { "aria-labelledby": id + "-title" },
        h("h2", { id: id + "-title" }, p ? t("admin.intake.editTitle", { name: p.name }) : t("admin.intake.create")),
        field(id + "-name", t("admin.intake.name"), name, t("admin.intake.nameHint")),
        field(id + "-path", t("admin.intake.pathTemplate"), path, t("admin.intake.pathHint")),
        field(id + "-dup", t("admin.intake.duplicates"), dup),
        h("fieldset", h("legend", t("admin.intake.actions")), boxes.map((b) => h("label.check", b, " ", named("actiontype.", b.value)))),
        field(id + "-tags", t("admin.intake.tags"), tags, t("admin.intake.tagsHint")),
        attrs.box,
        field(id + "-user", t("admin.intake.user"), user, t("admin.intake.userHint")), userList,
        groups.box,
        h("p", watch, " ", h("label", { for: id + "-watch" }, t("admin.intake.watch"))),
        h("div.actions", h("button.primary", { type: "submit" }, p ? t("common.save") : t("admin.intake.create")),
          h("button", { type: "button", onclick: () => clear(formSlot) }, t("admin.cancel")))), async () => {
        const profile = {
          name: name.value.trim(),
          duplicates: dup.value,
          actions: boxes.filter((b) => b.checked).map((b) => ({ type: b.value })),
          tags: tagsOf(tags.value),
        };
        if (path.value.trim()) profile.pathTemplate = path.value.trim();
        profile.attributes = attrs.read();
        if (user.value.trim()) profile.userId = user.value.trim();
        profile.groups = groups.read();
        if (watch.checked) profile.watchFolder = { ...(wf || {}), enabled: true };
        else if (wf) profile.watchFolder = { ...wf, enabled: false };
        delete (profile.watchFolder || {}).path;
        if (p) await api("PUT", `${base}/${enc(p.name)}`, { body: { intakeProfile: profile } });
        else await api("POST", base, { body: { intakeProfile: profile } });
        status(t(p ? "admin.intake.saved" : "admin.intake.created", { name: profile.name }), "info");
        clear(formSlot);
        await load();
      });
      clear(formSlot, f);
      (p ? path : name).focus();
    }

    // test sends a small file through the profile's upload address, says
    // where it went, and deletes the document again.
    async function test(p) {
      clear(testOut, h("p.meta", t("admin.intake.testing", { name: p.name })));
      try {
        const form = new FormData();
        form.append("file", new File([t("admin.intake.testContent", { name: p.name })], "quire-intake-test.txt", { type: "text/plain" }));
        const out = await apiForm(`/sites/${enc(site)}/intake/${enc(p.name)}`, form);
        const doc = (out.documents || [])[0];
        const skipped = (out.skipped || [])[0];
        if (doc) {
          let removed = false;
          if (can("DELETE")) {
            try { await api("DELETE", `/documents/${enc(doc.documentId)}`, { query: { siteId: site } }); removed = true; } catch (_) { /* said below */ }
          }
          clear(testOut, h("p.msg.info#intake-test-result", t(removed ? "admin.intake.testOk" : "admin.intake.testOkKept", { name: p.name, path: doc.path })));
        } else if (skipped) {
          clear(testOut, h("p.msg.info#intake-test-result", t("admin.intake.testSkipped", { name: p.name })));
        }
      } catch (e) {
        clear(testOut, h("p.msg.error#intake-test-result", { role: "alert" }, t("admin.intake.testFailed", { name: p.name }), " ", errorText(e)));
      }
      // The watched folder and the e-mail address, where the profile has
      // them; a failure says so in words, the server's reason behind
      // "Details".
      const sources = [];
      if (p.watchFolder && p.watchFolder.enabled !== false) sources.push("watchFolder");
      if (p.mailAddress) sources.push("mail");
      const lines = [];
      for (const src of sources) {
        try {
          const out = await api("POST", `${base}/${enc(p.name)}/test`, { body: { source: src } });
          const c = (out.tests || [])[0] || {};
          const ok = c.ok === true;
          const key = src === "mail" ? (ok ? "admin.intake.mailOk" : "admin.intake.mailFailed") : (ok ? "admin.intake.folderOk" : "admin.intake.folderFailed");
          lines.push(h("li", { dataset: { source: src, ok: String(ok) } }, h(ok ? "span.state.good" : "span.state.bad", t(key, { name: p.name, path: c.path || "", address: c.mailAddress || p.mailAddress || "" })),
            !ok && c.message ? h("details", h("summary", t("doc.details")), h("span.meta", c.message)) : null));
        } catch (e) {
          lines.push(h("li", { dataset: { source: src, ok: "false" } }, h("span.state.bad", errorText(e))));
        }
      }
      if (!p.mailAddress) lines.push(h("li", { dataset: { source: "mail", ok: "none" } }, t("admin.intake.noMail")));
      testOut.append(h("ul.intake-checks#intake-checks", lines));
      await load();
    }

    async function load() {
      const out = await api("GET", base);
      const profiles = out.intakeProfiles || [];
      // At most 4 requests at a time (a site has up to 100 profiles).
      const errors = new Array(profiles.length);
      let next = 0;
      await Promise.all(Array.from({ length: Math.min(4, profiles.length) }, async () => {
        while (next < profiles.length) {
          const i = next++;
          errors[i] = await api("GET", `${base}/${enc(profiles[i].name)}/errors`)
            .then((x) => x.errors || [], (e) => ({ failed: errorText(e) }));
        }
      }));
      if (ctx.stale()) return;
      if (!profiles.length) { clear(body, h("p#intake-empty", t("admin.intake.empty"))); return; }
      clear(body,
        h("table.list#intake-list", h("caption.sr", t("admin.intake.caption", { site })),
          h("thead", h("tr", ["admin.intake.name", "admin.intake.receives", "admin.intake.failures", "admin.intake.lastFailure", "admin.actions"]
            .map((k) => h("th", { scope: "col" }, t(k))))),
          h("tbody", profiles.map((p, i) => {
            const errs = Array.isArray(errors[i]) ? errors[i] : [];
            const wf = p.watchFolder && p.watchFolder.enabled !== false && p.watchFolder.path ? p.watchFolder.path : "";
            return h("tr", { dataset: { profile: p.name } },
              h("td", errs.length ? h("a", { href: "#intake-errors-" + i }, p.name) : p.name),
              h("td",
                h("div", t("admin.intake.post"), " ", h("code", p.intakeUrl || "")),
                wf ? h("div", t("admin.intake.folder"), " ", h("code", wf)) : null,
                // The scan-to-e-mail address, where the server listens for
                // mail (API.md "Scanner intake").
                p.mailAddress ? h("div", t("admin.intake.mail"), " ", h("code", p.mailAddress)) : null,
                p.name === "webdav" ? h("div", t("admin.intake.webdav"), " ", h("code", `${location.origin}/dav/${enc(site)}/`)) : null),
              h("td", !Array.isArray(errors[i]) ? h("a", { href: "#intake-errors-" + i }, "—")
                : errs.length ? h("span.state.bad", String(errs.length)) : h("span.state.good", "0")),
              h("td", errs.length ? fmtDate(errs[0].insertedDate, lang()) : "—"),
              h("td.intake-actions",
                h("button.small.test", { type: "button", "aria-label": t("admin.intake.testNamed", { name: p.name }), onclick: () => test(p) }, t("admin.intake.test")), " ",
                h("button.small.edit", { type: "button", "aria-label": t("admin.intake.editNamed", { name: p.name }), onclick: () => profileForm(p) }, t("admin.attributes.edit")), " ",
                h("button.small.danger.remove", { type: "button", "aria-label": t("admin.intake.removeNamed", { name: p.name }), onclick: async () => {
                  if (!confirm(t("admin.intake.removeConfirm", { name: p.name }))) return;
                  try {
                    await api("DELETE", `${base}/${enc(p.name)}`);
                    status(t("admin.intake.removed", { name: p.name }), "info");
                    await load();
                  } catch (ex) { status(errorText(ex), "error"); }
                } }, t("admin.delete"))));
          }))),
        profiles.map((p, i) => {
          const errs = errors[i];
          if (Array.isArray(errs) && !errs.length) return null;
          return h("section.intake-errors", { id: "intake-errors-" + i, dataset: { profile: p.name }, "aria-labelledby": "intake-errors-title-" + i },
            h("h2", { id: "intake-errors-title-" + i }, t("admin.intake.recent", { name: p.name })),
            !Array.isArray(errs) ? h("p.msg.error", errs.failed) :
              h("table.list", h("thead", h("tr", ["admin.intake.when", "admin.intake.source", "admin.intake.file", "admin.intake.error"]
                .map((k) => h("th", { scope: "col" }, t(k))))),
              h("tbody", errs.map((x) => h("tr", h("td", fmtDate(x.insertedDate, lang())), h("td", source(x.source)),
                h("td", x.fileName || "—"), h("td.error", why(x.error),
                  x.error ? h("details", h("summary", t("doc.details")), h("span.meta", x.error)) : null))))));
        }));
    }

    await load();
    if (ctx.stale()) return;
    clear(main, tabNav("#/admin/intake"), h("h1", t("admin.intake.title")), h("p.meta", t("admin.intake.intro", { site })),
      h("div.actions", h("button.primary#intake-new", { type: "button", onclick: () => profileForm(null) }, t("admin.intake.create")),
        h("button#intake-refresh", { type: "button", onclick: () => load().catch((e) => status(errorText(e), "error")) }, t("admin.intake.refresh"))),
      formSlot, testOut, body);
  },
};
