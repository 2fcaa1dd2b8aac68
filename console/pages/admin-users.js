// Users and groups (Admins; API.md "Users and groups"): create a user with
// a temporary password, disable or enable, reset the password (a new
// temporary one, or a mailed code), delete; groups with their members.
//
// Access is chosen from lists, a site and a role (reader, writer,
// governor, or administrator of everything), never by typing a group's
// name: the groups behind them are FormKiQ's, "<site>_read", "<site>",
// "<site>_govern" and "Admins" (made when first needed). Other groups
// (a team that approves reviews, owns folders) keep their own names.
import { h, clear, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { state, pager, status } from "../js/ctx.js";
import { isAdmin, tabNav, field, submitting, run } from "../js/admin.js";
import { named } from "../js/words.js";
import { groupOf, roleOf, groupLabel } from "../js/groups.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;
const PAGE = 25;
const ROLES = ["reader", "writer", "governor", "admin"];

// accessPicker is a site list and a role list.
function accessPicker(prefix, sites, labelFor) {
  const site = h("select", { id: prefix + "-site", "aria-label": labelFor ? t("admin.users.siteFor", { name: labelFor }) : null },
    sites.map((x) => h("option", { value: x }, x)));
  const role = h("select", { id: prefix + "-role", "aria-label": labelFor ? t("admin.users.roleFor", { name: labelFor }) : null },
    labelFor ? h("option", { value: "" }, t("admin.users.chooseRole")) : h("option", { value: "" }, t("admin.users.noAccess")),
    ROLES.map((r) => h("option", { value: r }, t("admin.users.role." + r))));
  const sync = () => { site.disabled = role.value === "admin"; };
  role.addEventListener("change", sync);
  return { site, role, group: () => (role.value ? groupOf(site.value, role.value) : "") };
}

// ensureGroup makes a role's group when it does not exist yet.
async function ensureGroup(name, known) {
  if (known.includes(name)) return;
  try { await api("POST", "/groups", { body: { group: { name } } }); } catch (e) { if (e.status !== 409) throw e; }
}

export default {
  path: /^\/admin\/users$/,
  async render(ctx, main) {
    if (!isAdmin()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    let groups = [];
    const sites = state.sites.map((x) => x.siteId);
    const tbody = h("tbody");
    const pg = pager(load);
    let currentToken = "";
    const groupList = h("ul.groups#group-list");

    async function loadGroups() {
      const out = await api("GET", "/groups", { query: { limit: 100 } });
      groups = (out.groups || []).map((g) => g.name);
      clear(groupList, groups.map((g) => h("li", h("span.tag", { title: g }, groupLabel(g, sites)), " ",
        h("button.small.danger", { type: "button", "aria-label": t("admin.users.deleteGroupNamed", { name: g }),
          onclick: async () => {
            if (!confirm(t("admin.users.deleteGroupConfirm", { name: g }))) return;
            await run(() => api("DELETE", `/groups/${enc(g)}`), t("admin.users.groupDeleted", { name: g }))();
            await loadGroups(); await load(currentToken);
          } }, t("admin.delete")))));
    }

    function row(u, userGroups) {
      const name = u.username;
      const reload = () => load(currentToken);
      const actions = h("td.actions-cell");
      // No Disable or Delete on one's own row: an admin does not lock
      // themselves out from here (the API would let them).
      const self = state.user && state.user.username === name;
      const showActions = () => clear(actions,
        self ? null : h(u.enabled === false ? "button.small.enable" : "button.small.disable", { type: "button",
          onclick: () => run(() => api("PUT", `/users/${enc(name)}/${u.enabled === false ? "ENABLE" : "DISABLE"}`),
            t(u.enabled === false ? "admin.users.enabled" : "admin.users.disabled", { name }))().then(reload) },
          t(u.enabled === false ? "admin.users.enable" : "admin.users.disable")),
        " ",
        h("button.small.reset", { type: "button", onclick: resetForm }, t("admin.users.reset")),
        " ",
        self ? null : h("button.small.danger", { type: "button", onclick: async () => {
          if (!confirm(t("admin.users.deleteConfirm", { name }))) return;
          await run(() => api("DELETE", `/users/${enc(name)}`), t("admin.users.deleted", { name }))();
          await reload();
        } }, t("admin.delete")));
      function resetForm() {
        const pw = h("input", { type: "password", autocomplete: "new-password", "aria-label": t("admin.users.tempPasswordFor", { name }) });
        const f = submitting(h("form.inline.reset-form", pw,
          h("button.small.primary", { type: "submit" }, t("admin.users.setPassword")),
          h("button.small", { type: "button", onclick: showActions }, t("admin.cancel"))), async () => {
          const body = pw.value ? { temporaryPassword: pw.value } : undefined;
          await api("PUT", `/users/${enc(name)}/RESET_PASSWORD`, { body });
          status(t(pw.value ? "admin.users.tempSet" : "admin.users.codeMailed", { name }), "info");
          showActions();
        });
        clear(actions, f, h("small.meta", t("admin.users.resetHint")));
        pw.focus();
      }
      showActions();
      // Access: a site and a role from lists; the user's own groups
      // (teams) from the list of groups that are no role.
      const pick = accessPicker("access-" + name.replace(/[^a-z0-9_-]/gi, "_"), sites, name);
      const give = h("button.small.give", { type: "button", onclick: async () => {
        const g = pick.group();
        if (!g) { pick.role.focus(); return; }
        await run(async () => {
          await ensureGroup(g, groups);
          await api("POST", `/groups/${enc(g)}/users`, { body: { user: { username: name } } });
        }, t("admin.users.added", { name, group: groupLabel(g, sites) }))();
        await loadGroups(); await reload();
      } }, t("admin.users.give"));
      const teams = groups.filter((g) => !roleOf(g, sites) && !userGroups.includes(g));
      const addSel = teams.length ? h("select", { "aria-label": t("admin.users.addToGroupFor", { name }) },
        h("option", { value: "" }, t("admin.users.addToGroup")),
        teams.map((g) => h("option", { value: g }, g))) : null;
      if (addSel) addSel.addEventListener("change", async () => {
        const g = addSel.value;
        if (!g) return;
        await run(() => api("POST", `/groups/${enc(g)}/users`, { body: { user: { username: name } } }), t("admin.users.added", { name, group: g }))();
        await reload();
      });
      return h("tr", { dataset: { user: name } },
        h("td", name), h("td", u.email || ""),
        h("td", t(u.enabled === false ? "admin.users.stateDisabled" : "admin.users.stateEnabled"), h("br"), h("small.meta", named("admin.users.status.", u.userStatus))),
        h("td", h("ul.chips", userGroups.map((g) => h("li", h("span.tag", { title: g }, groupLabel(g, sites)),
          h("button.small.link", { type: "button", "aria-label": t("admin.users.removeFrom", { name, group: groupLabel(g, sites) }),
            onclick: () => run(() => api("DELETE", `/groups/${enc(g)}/users/${enc(name)}`), t("admin.users.removed", { name, group: groupLabel(g, sites) }))().then(reload) }, "×")))),
        h("div.inline.access", pick.site, pick.role, give), addSel),
        h("td", fmtDate(u.insertedDate, lang())),
        actions);
    }

    async function load(token) {
      currentToken = token;
      const out = await api("GET", "/users", { query: { limit: PAGE, next: token } });
      if (ctx.stale()) return;
      const users = out.users || [];
      const memberships = await Promise.all(users.map((u) =>
        api("GET", `/users/${enc(u.username)}/groups`).then((g) => (g.groups || []).map((x) => x.name)).catch(() => [])));
      if (ctx.stale()) return;
      clear(tbody, users.map((u, i) => row(u, memberships[i])));
      if (!users.length) tbody.append(h("tr", h("td", { colspan: 6 }, t("admin.users.empty"))));
      pg.update(out.next);
    }

    const uname = h("input", { type: "text", required: true, autocomplete: "off" });
    const email = h("input", { type: "email", autocomplete: "off" });
    const temp = h("input", { type: "password", autocomplete: "new-password", minlength: 8 });
    const newAccess = accessPicker("new", sites, null);
    const createUser = submitting(h("form.panel#user-form", { "aria-labelledby": "user-form-title" },
      h("h2#user-form-title", t("admin.users.create")),
      field("new-username", t("admin.users.username"), uname),
      field("new-email", t("admin.users.email"), email),
      field("new-temp", t("admin.users.tempPassword"), temp, t("admin.users.tempHint")),
      h("fieldset.access", h("legend", t("admin.users.accessTitle")),
        h("div.field", h("label", { for: "new-site" }, t("admin.users.site")), newAccess.site),
        h("div.field", h("label", { for: "new-role" }, t("admin.users.role")), newAccess.role, h("small.meta", t("admin.users.roleHint")))),
      h("div.actions", h("button.primary", { type: "submit" }, t("admin.users.create")))), async () => {
      const user = { username: uname.value.trim() };
      if (email.value.trim()) user.email = email.value.trim();
      const body = { user };
      if (temp.value) body.temporaryPassword = temp.value;
      await api("POST", "/users", { body });
      const g = newAccess.group();
      if (g) {
        await ensureGroup(g, groups);
        await api("POST", `/groups/${enc(g)}/users`, { body: { user: { username: user.username } } });
        await loadGroups();
      }
      status(t("admin.users.created", { name: user.username }), "info");
      uname.value = ""; email.value = ""; temp.value = "";
      await load("");
    });

    const gname = h("input", { type: "text", required: true, autocomplete: "off" });
    const gdesc = h("input", { type: "text", autocomplete: "off" });
    const createGroup = submitting(h("form.panel#group-form", { "aria-labelledby": "group-form-title" },
      h("h2#group-form-title", t("admin.users.createGroup")),
      field("new-groupname", t("admin.users.groupName"), gname, t("admin.users.groupHint")),
      field("new-groupdesc", t("admin.users.groupDescription"), gdesc),
      h("div.actions", h("button.primary", { type: "submit" }, t("admin.users.createGroup")))), async () => {
      await api("POST", "/groups", { body: { group: { name: gname.value.trim(), description: gdesc.value } } });
      status(t("admin.users.groupCreated", { name: gname.value.trim() }), "info");
      gname.value = ""; gdesc.value = "";
      await loadGroups(); await load(currentToken);
    });

    await loadGroups();
    await load("");
    if (ctx.stale()) return;
    clear(main, tabNav("#/admin/users"), h("h1", t("admin.users.title")),
      h("div.forms", createUser, createGroup),
      h("h2", t("admin.users.list")),
      h("table.list#user-list", h("thead", h("tr", ["admin.users.username", "admin.users.email", "admin.users.state", "admin.users.groups", "admin.users.insertedDate", "admin.actions"]
        .map((k) => h("th", { scope: "col" }, t(k))))), tbody), pg.el,
      h("h2", t("admin.users.groupsTitle")), groupList);
  },
};
