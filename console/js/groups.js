// Groups in words (issue 47): FormKiQ's role groups of a site,
// "<site>_read", "<site>", "<site>_govern", and "Admins", are never
// typed or shown by name: a site and a role are chosen from lists and a
// group is named as "finance: reader". Other groups (teams, an identity
// provider's groups) keep their names.
import { t } from "../i18n/index.js";

export const SITE_ROLES = ["reader", "writer", "governor"];

// groupOf is the group giving role on site; roleOf reads a group's name
// back as {site, role}, or null for a group of its own.
export function groupOf(site, role) {
  return role === "admin" ? "Admins" : role === "reader" ? site + "_read" : role === "governor" ? site + "_govern" : site;
}
export function roleOf(group, sites) {
  if (group === "Admins") return { site: "", role: "admin" };
  for (const [suffix, role] of [["_read", "reader"], ["_govern", "governor"]]) {
    if (group.endsWith(suffix) && sites.includes(group.slice(0, -suffix.length))) return { site: group.slice(0, -suffix.length), role };
  }
  return sites.includes(group) ? { site: group, role: "writer" } : null;
}

// groupLabel names a group in words: "finance: reader", "administrator".
export function groupLabel(group, sites) {
  const r = roleOf(group, sites);
  if (!r) return t("admin.users.ownGroup", { name: group });
  return r.role === "admin" ? t("admin.users.role.admin") : t("admin.users.access", { site: r.site, role: t("admin.users.role." + r.role) });
}
