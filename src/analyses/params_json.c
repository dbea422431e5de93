/* The JSON records of parameter counts (ar_param_count_json,
 * ar_paper_tables_json): what `attnrank params --json` prints and
 * attnrank.ParamCount / attnrank.PaperTables are built from. */
#include "attnrank/json.h"

#include <math.h>

#include "json_build.h"

static json_t *count_json(jb *b, const ar_bert_config *c, const ar_param_count *p)
{
    json_t *o = json_object();
    jb_set(b, o, "d", jb_size(c->d));
    jb_set(b, o, "heads", jb_size(c->h));
    jb_set(b, o, "head_size", jb_size(c->dp));
    jb_set(b, o, "layers", jb_size(c->layers));
    jb_set(b, o, "ffn", jb_size(c->ffn));
    jb_set(b, o, "vocab", jb_size(c->vocab));
    json_t *br = json_object();
    jb_set(b, br, "embeddings", jb_u64(p->embeddings));
    jb_set(b, br, "attention_per_layer", jb_u64(p->attention));
    jb_set(b, br, "ffn_per_layer", jb_u64(p->ffn));
    jb_set(b, br, "layernorms_per_layer", jb_u64(p->layernorms));
    jb_set(b, br, "encoder", jb_u64(p->encoder));
    jb_set(b, br, "pooler", jb_u64(p->pooler));
    jb_set(b, br, "mlm_head", jb_u64(p->mlm_head));
    jb_set(b, o, "breakdown", br);
    jb_set(b, o, "total_params", jb_u64(p->total));
    return o;
}

int ar_param_count_json(const ar_bert_config *c, const ar_param_count *p, unsigned flags,
                        char **text, ar_error *err)
{
    if (c == NULL || p == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_param_count_json: NULL argument");
    jb b;
    jb_init(&b, flags);
    return jb_dump(&b, count_json(&b, c, p), "ar_param_count_json", text, err);
}

int ar_paper_tables_json(unsigned flags, char **text, ar_error *err)
{
    if (text == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_paper_tables_json: NULL text");
    *text = NULL;
    const ar_paper_config *pc = NULL;
    size_t count = ar_paper_configs(&pc);
    jb b;
    jb_init(&b, flags);
    json_t *list = json_array();
    double worst = 0.0;
    for (size_t i = 0; i < count; i++) {
        ar_bert_config cfg;
        ar_bert_config_init(&cfg, pc[i].d, pc[i].h, pc[i].dp);
        ar_param_count p;
        int rc = ar_bert_params(&cfg, &p, err);
        if (rc != AR_OK) {
            json_decref(list);
            return ar_error_set(err, rc, "ar_paper_tables_json: paper configuration %s",
                                pc[i].table);
        }
        double dev = ar_paper_config_deviation(&pc[i], &p);
        if (fabs(dev) > worst)
            worst = fabs(dev);
        json_t *o = count_json(&b, &cfg, &p);
        jb_set(&b, o, "table", json_string(pc[i].table));
        jb_set(&b, o, "printed_params", jb_real(&b, pc[i].printed));
        jb_set(&b, o, "deviation", jb_real(&b, dev));
        jb_append(&b, list, o);
    }
    json_t *o = json_object();
    jb_set(&b, o, "configs", list);
    jb_set(&b, o, "max_abs_deviation", jb_real(&b, worst));
    jb_set(&b, o, "tolerance", jb_real(&b, AR_PAPER_PARAMS_TOLERANCE));
    return jb_dump(&b, o, "ar_paper_tables_json", text, err);
}
