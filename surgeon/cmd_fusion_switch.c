/*
 * cmd_fusion_switch.c - `surgeon fusion-switch`: write, check and list ATC
 * fusion switch files, and switch off the passes behind given nodes.
 */
#include "cli.h"
#include "sg_alloc.h"
#include "sg_fusion.h"
#include "sg_io.h"
#include "sg_json.h"

#include <getopt.h>
#include <string.h>
#include <strings.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_fusion_switch = {
    "fusion-switch",
    "write, check or list ATC fusion switch files (--fusion_switch_file)",
    "usage: surgeon fusion-switch -o FILE [--off all|NAME,...] [--on NAME,...]\n"
    "                             [--graph-only | --ub-only]\n"
    "                             [--from-map MAP.json --nodes N1,N2 [--model M.onnx]]\n"
    "       surgeon fusion-switch --check FILE\n"
    "       surgeon fusion-switch --list [--json]\n\n"
    "Write the JSON file ATC's --fusion_switch_file reads:\n"
    "  {\"Switch\": {\"GraphFusion\": {\"ALL\": \"off\"}, \"UBFusion\": {\"ALL\": \"off\"}}}\n"
    "Every pass is on by default; in a section a named pass overrides ALL.\n\n"
    "  -o, --output FILE   the file to write (atomically: temp file + rename)\n"
    "  --off all|NAMES     switch off every pass (all) or the named ones\n"
    "  --on NAMES          switch the named passes on (e.g. with --off all)\n"
    "  --graph-only        'all' means the GraphFusion section only; names not in\n"
    "                      the catalogue go there\n"
    "  --ub-only           the same for the UBFusion section\n"
    "  --from-map MAP.json with --nodes: switch off exactly the passes that made\n"
    "                      the compiled ops covering those ONNX nodes, read from\n"
    "                      the JSON of 'atc --mode=1' (pass_name, pass_name_ub,\n"
    "                      _datadump_original_op_names)\n"
    "  --nodes N1,N2       ONNX node names (repeatable)\n"
    "  --model M.onnx      check that the --nodes exist in the model\n"
    "  --check FILE        validate a switch file (JSON or ATC's PassName:off lines):\n"
    "                      errors name line:column; names not in the catalogue\n"
    "                      and passes under the wrong section are warnings\n"
    "  --list              the pass catalogue: name, graph or UB, what it fuses\n"
    "  --json              with --list: as JSON\n\n"
    "Names are ATC pass names (see --list); a name not in the catalogue needs\n"
    "--graph-only or --ub-only to say which section it belongs to.\n",
    run,
};

static int list_catalogue(bool json)
{
    if (json) {
        struct sg_json j;
        sg_json_init(&j, stdout, true);
        sg_json_array_begin(&j);
        for (int i = 0; i < SG_FUSION_PASS_COUNT; i++) {
            const struct sg_fusion_pass *p = sg_fusion_pass_get((enum sg_fusion_pass_id)i);
            sg_json_object_begin(&j);
            sg_json_key(&j, "name");
            sg_json_string(&j, p->name);
            sg_json_key(&j, "section");
            sg_json_string(&j, sg_fusion_kind_name(p->kind));
            sg_json_key(&j, "fuses");
            sg_json_string(&j, p->fuses);
            sg_json_key(&j, "result");
            sg_json_string(&j, p->result);
            sg_json_object_end(&j);
        }
        sg_json_array_end(&j);
        return SG_EXIT_OK;
    }
    for (int k = 0; k < SG_FUSION_KIND_COUNT; k++) {
        printf("%s%s passes (section %s):\n", k ? "\n" : "",
               k == SG_FUSION_GRAPH ? "Graph fusion" : "UB fusion",
               sg_fusion_kind_name((enum sg_fusion_kind)k));
        for (int i = 0; i < SG_FUSION_PASS_COUNT; i++) {
            const struct sg_fusion_pass *p = sg_fusion_pass_get((enum sg_fusion_pass_id)i);
            if ((int)p->kind != k)
                continue;
            printf("  %-36s %s\n  %-36s -> %s\n", p->name, p->fuses, "", p->result);
        }
    }
    return SG_EXIT_OK;
}

/* Warnings for entries ATC may not honour. */
static void warn_entries(const char *label, const sg_fusion_switch *sw)
{
    for (size_t i = 0; i < sw->n_entries; i++) {
        const struct sg_fusion_switch_entry *e = &sw->entries[i];
        enum sg_fusion_entry_check c = sg_fusion_switch_check_entry(e);
        const struct sg_fusion_pass *near =
            c == SG_FUSION_ENTRY_UNKNOWN ? sg_fusion_pass_suggest(e->name) : NULL;
        if (near)
            cli_warn("%s:%u:%u: '%s' is not in surgeon's pass catalogue (did you mean '%s'?); "
                     "ATC may not know it either",
                     label, e->line, e->col, e->name, near->name);
        else if (c == SG_FUSION_ENTRY_UNKNOWN)
            cli_warn("%s:%u:%u: '%s' is not in surgeon's pass catalogue (see 'surgeon "
                     "fusion-switch --list'); ATC may not know it either",
                     label, e->line, e->col, e->name);
        else if (c == SG_FUSION_ENTRY_WRONG_SECTION)
            cli_warn("%s:%u:%u: '%s' is a %s fusion pass but is listed under %s, where ATC will "
                     "not find it",
                     label, e->line, e->col, e->name,
                     sg_fusion_kind_word(sg_fusion_pass_find(e->name)->kind),
                     sg_fusion_kind_name(e->kind));
    }
}

static void print_entries(const sg_fusion_switch *sw)
{
    for (size_t i = 0; i < sw->n_entries; i++) {
        const struct sg_fusion_switch_entry *e = &sw->entries[i];
        printf("  %-12s %-40s %s\n", e->any_kind ? "(both)" : sg_fusion_kind_name(e->kind), e->name,
               e->on ? "on" : "off");
    }
}

static int check_file(const char *path)
{
    struct sg_diag d = {0};
    sg_fusion_switch *sw;
    if (sg_fusion_switch_read(path, &sw, &d))
        return cli_fail(&d);
    warn_entries(path, sw);
    printf("%s: valid fusion switch file (%s), %zu entr%s\n", path,
           sw->format == SG_FUSION_FORMAT_JSON ? "JSON" : "PassName:on|off lines", sw->n_entries,
           sw->n_entries == 1 ? "y" : "ies");
    print_entries(sw);
    sg_fusion_switch_free(sw);
    return SG_EXIT_OK;
}

struct settings {
    bool graph_only, ub_only;
};

/* Put name (on or off) in its section; returns an exit code or -1 when done. */
static int place(sg_fusion_switch *sw, const struct settings *s, const char *name, bool on)
{
    struct sg_diag d = {0};
    bool all = strcasecmp(name, "all") == 0;
    const struct sg_fusion_pass *p = all ? NULL : sg_fusion_pass_find(name);
    bool sections[SG_FUSION_KIND_COUNT] = {false, false};
    if (all) {
        sections[SG_FUSION_GRAPH] = !s->ub_only;
        sections[SG_FUSION_UB] = !s->graph_only;
        name = SG_FUSION_ALL;
    } else if (p) {
        if ((s->graph_only && p->kind != SG_FUSION_GRAPH) ||
            (s->ub_only && p->kind != SG_FUSION_UB))
            return cli_usage(&sg_cmd_fusion_switch, "'%s' is a %s fusion pass, not allowed with %s",
                             name, sg_fusion_kind_word(p->kind),
                             s->graph_only ? "--graph-only" : "--ub-only");
        sections[p->kind] = true;
    } else if (s->graph_only || s->ub_only) {
        const struct sg_fusion_pass *near = sg_fusion_pass_suggest(name);
        sections[s->graph_only ? SG_FUSION_GRAPH : SG_FUSION_UB] = true;
        cli_warn("'%s' is not in surgeon's pass catalogue%s%s%s; writing it under %s", name,
                 near ? " (did you mean '" : "", near ? near->name : "", near ? "'?)" : "",
                 s->graph_only ? "GraphFusion" : "UBFusion");
    } else {
        const struct sg_fusion_pass *near = sg_fusion_pass_suggest(name);
        if (near)
            return cli_usage(&sg_cmd_fusion_switch,
                             "'%s' is not in the pass catalogue: did you mean '%s'? (a pass "
                             "ATC knows that surgeon does not needs --graph-only or --ub-only)",
                             name, near->name);
        return cli_usage(&sg_cmd_fusion_switch,
                         "'%s' is not in the pass catalogue (see --list); add --graph-only or "
                         "--ub-only to say which section it goes to",
                         name);
    }
    for (int k = 0; k < SG_FUSION_KIND_COUNT; k++) {
        if (!sections[k])
            continue;
        sg_status st = sg_fusion_switch_set(sw, (enum sg_fusion_kind)k, name, on, &d);
        if (st == SG_EINVAL)
            return cli_usage(&sg_cmd_fusion_switch, "%s", d.msg);
        if (st)
            return cli_fail(&d);
    }
    return -1;
}

/* --from-map: report what covers each node and switch off its passes. */
static int from_map(sg_fusion_switch *sw, const char *map_path, const struct cli_list *nodes,
                    const char *model_path)
{
    struct sg_diag d = {0};
    int rc = SG_EXIT_OK;
    sg_atc_map *map = NULL;
    bool *uncovered = NULL;
    if (model_path) {
        sg_model *m;
        struct sg_load_opts lo = {.skip_external = true};
        if (sg_model_load(model_path, &lo, &m, &d))
            return cli_fail(&d);
        size_t missing = 0;
        for (size_t i = 0; i < nodes->n; i++)
            if (!sg_model_find_node(m, nodes->v[i])) {
                cli_error("%s: no node named '%s'", model_path, nodes->v[i]);
                missing++;
            }
        sg_model_free(m);
        if (missing)
            return SG_EXIT_FAIL;
    }
    if (sg_atc_map_read(map_path, &map, &d))
        return cli_fail(&d);
    uncovered = sg_calloc(nodes->n, sizeof *uncovered);
    size_t n_off = 0;
    if (!uncovered) {
        sg_diag_set(&d, SG_ENOMEM, "out of memory");
        rc = cli_fail(&d);
        goto out;
    }
    if (sg_fusion_switch_off_for_nodes(sw, map, (const char *const *)nodes->v, nodes->n, uncovered,
                                       &n_off, &d)) {
        rc = cli_fail(&d);
        goto out;
    }
    for (size_t i = 0; i < nodes->n; i++) {
        if (uncovered[i]) {
            cli_warn("%s: no compiled op covers node '%s' (folded away, or not an ONNX node name "
                     "of this model?)",
                     map_path, nodes->v[i]);
            continue;
        }
        for (size_t k = 0; k < map->n_ops; k++) {
            const struct sg_atc_op *op = &map->ops[k];
            if (!sg_atc_op_covers(op, nodes->v[i]))
                continue;
            printf("%s: compiled as %s '%s'", nodes->v[i], *op->type ? op->type : "op", op->name);
            if (!op->n_passes && !op->ub_pass)
                printf(", not made by a fusion pass\n");
            else {
                printf(", made by");
                for (size_t p = 0; p < op->n_passes; p++)
                    printf(" %s", op->passes[p]);
                if (op->ub_pass)
                    printf(" %s (UB)", op->ub_pass);
                printf("\n");
            }
        }
    }
    if (n_off == 0) {
        cli_error("no fusion pass made the ops covering %s: nothing to switch off; nothing "
                  "written",
                  nodes->n == 1 ? "this node" : "these nodes");
        rc = SG_EXIT_FAIL;
    }
out:
    sg_free(uncovered);
    sg_atc_map_free(map);
    return rc;
}

static int run(int argc, char **argv)
{
    enum {
        OPT_OFF = 256,
        OPT_ON,
        OPT_GRAPH,
        OPT_UB,
        OPT_MAP,
        OPT_NODES,
        OPT_MODEL,
        OPT_CHECK,
        OPT_LIST,
        OPT_JSON
    };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"off", required_argument, NULL, OPT_OFF},
        {"on", required_argument, NULL, OPT_ON},
        {"graph-only", no_argument, NULL, OPT_GRAPH},
        {"ub-only", no_argument, NULL, OPT_UB},
        {"from-map", required_argument, NULL, OPT_MAP},
        {"nodes", required_argument, NULL, OPT_NODES},
        {"model", required_argument, NULL, OPT_MODEL},
        {"check", required_argument, NULL, OPT_CHECK},
        {"list", no_argument, NULL, OPT_LIST},
        {"json", no_argument, NULL, OPT_JSON},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *map = NULL, *model = NULL, *check = NULL;
    bool list = false, json = false;
    struct settings s = {0};
    struct cli_list off = {0}, on = {0}, nodes = {0};
    int rc = SG_EXIT_OK, c;
    sg_fusion_switch *sw = NULL;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case OPT_OFF:
        case OPT_ON:
        case OPT_NODES:
            if (!cli_list_add_commas(c == OPT_OFF ? &off : c == OPT_ON ? &on : &nodes, optarg)) {
                rc = cli_usage(&sg_cmd_fusion_switch, "bad list '%s' for %s", optarg,
                               argv[optind - 1]);
                goto out;
            }
            break;
        case OPT_GRAPH:
            s.graph_only = true;
            break;
        case OPT_UB:
            s.ub_only = true;
            break;
        case OPT_MAP:
            map = optarg;
            break;
        case OPT_MODEL:
            model = optarg;
            break;
        case OPT_CHECK:
            check = optarg;
            break;
        case OPT_LIST:
            list = true;
            break;
        case OPT_JSON:
            json = true;
            break;
        case ':':
            rc = cli_usage(&sg_cmd_fusion_switch, "option '%s' needs a value", argv[optind - 1]);
            goto out;
        default:
            rc = cli_unknown_option(&sg_cmd_fusion_switch, longopts, argv[optind - 1]);
            goto out;
        }
    }
    if (optind != argc) {
        rc = cli_usage(&sg_cmd_fusion_switch, "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    bool writing = out || off.n || on.n || map || nodes.n || s.graph_only || s.ub_only || model;
    if ((list + !!check + writing) > 1 || (json && !list)) {
        rc =
            cli_usage(&sg_cmd_fusion_switch,
                      json && !list ? "--json goes with --list"
                                    : "--list, --check and writing a file (-o) exclude each other");
        goto out;
    }
    if (list) {
        rc = list_catalogue(json);
        goto out;
    }
    if (check) {
        rc = check_file(check);
        goto out;
    }
    if (!out) {
        rc = cli_usage(&sg_cmd_fusion_switch, "missing -o FILE (or --check FILE, or --list)");
        goto out;
    }
    if (s.graph_only && s.ub_only) {
        rc = cli_usage(&sg_cmd_fusion_switch, "--graph-only and --ub-only exclude each other");
        goto out;
    }
    if (!!map != !!nodes.n) {
        rc = cli_usage(&sg_cmd_fusion_switch, "--from-map and --nodes go together");
        goto out;
    }
    if (model && !map) {
        rc = cli_usage(&sg_cmd_fusion_switch, "--model checks the --nodes of --from-map");
        goto out;
    }
    if (!off.n && !on.n && !map) {
        rc = cli_usage(&sg_cmd_fusion_switch, "nothing to switch: give --off, --on or --from-map");
        goto out;
    }
    for (size_t i = 0; i < off.n; i++)
        for (size_t k = 0; k < on.n; k++)
            if (strcasecmp(off.v[i], on.v[k]) == 0) {
                rc =
                    cli_usage(&sg_cmd_fusion_switch, "'%s' is both in --off and in --on", off.v[i]);
                goto out;
            }
    sw = sg_fusion_switch_create();
    if (!sw) {
        cli_error("out of memory");
        rc = SG_EXIT_FAIL;
        goto out;
    }
    for (size_t i = 0; i < off.n; i++)
        if ((rc = place(sw, &s, off.v[i], false)) >= 0)
            goto out;
    for (size_t i = 0; i < on.n; i++)
        if ((rc = place(sw, &s, on.v[i], true)) >= 0)
            goto out;
    rc = SG_EXIT_OK;
    if (map && (rc = from_map(sw, map, &nodes, model)) != SG_EXIT_OK)
        goto out;
    struct sg_diag d = {0};
    if (sg_fusion_switch_write(sw, out, &d)) {
        rc = cli_fail(&d);
        goto out;
    }
    printf("wrote %s:\n", out);
    print_entries(sw);
out:
    sg_fusion_switch_free(sw);
    cli_list_free(&off);
    cli_list_free(&on);
    cli_list_free(&nodes);
    return rc;
}
