#include <stdio.h>

#include "gpu/gpu.h"
#include "gpu/spirv.h"

const splat__spirv *splat__spirv_find(const splat__spirv *table, const char *name)
{
    for (const splat__spirv *s = table ? table : splat__spirv_table; s->name; s++)
        if (strcmp(s->name, name) == 0) return s;
    return NULL;
}

/* ------------------------------------------------------------ SPIR-V reflection */

enum {
    OP_EXECUTION_MODE = 16,
    OP_TYPE_BOOL = 20,
    OP_TYPE_INT = 21,
    OP_TYPE_FLOAT = 22,
    OP_TYPE_VECTOR = 23,
    OP_TYPE_MATRIX = 24,
    OP_TYPE_ARRAY = 28,
    OP_TYPE_STRUCT = 30,
    OP_TYPE_POINTER = 32,
    OP_CONSTANT = 43,
    OP_CONSTANT_COMPOSITE = 44,
    OP_SPEC_CONSTANT = 50,
    OP_SPEC_CONSTANT_COMPOSITE = 51,
    OP_VARIABLE = 59,
    OP_DECORATE = 71,
    OP_MEMBER_DECORATE = 72,
    OP_EXECUTION_MODE_ID = 331,
    DEC_SPEC_ID = 1,
    DEC_ARRAY_STRIDE = 6,
    DEC_BUILTIN = 11,
    DEC_BINDING = 33,
    DEC_SET = 34,
    DEC_OFFSET = 35,
    BUILTIN_WORKGROUP_SIZE = 25,
    MODE_LOCAL_SIZE = 17,
    MODE_LOCAL_SIZE_ID = 38,
    SC_UNIFORM = 2,
    SC_PUSH_CONSTANT = 9,
    SC_STORAGE_BUFFER = 12,
};

typedef struct spv_id {
    uint16_t op;
    uint32_t at;        /* word offset of the defining instruction */
    int32_t binding, set, spec_id, array_stride;
    bool workgroup_size;
} spv_id;

typedef struct spv_module {
    const uint32_t *w;
    size_t n_words;
    uint32_t bound;
    spv_id *ids;
    const uint32_t *spec;
    uint32_t n_spec;
} spv_module;

/* Value of a (spec) constant, using the caller's specialization where one is given. */
static bool const_value(const spv_module *m, uint32_t id, uint32_t *out)
{
    if (id >= m->bound) return false;
    const spv_id *d = &m->ids[id];
    if (d->op != OP_CONSTANT && d->op != OP_SPEC_CONSTANT) return false;
    if (d->op == OP_SPEC_CONSTANT && d->spec_id >= 0 && (uint32_t)d->spec_id < m->n_spec) {
        *out = m->spec[d->spec_id];
        return true;
    }
    *out = m->w[d->at + 3];
    return true;
}

static bool member_offset(const spv_module *m, uint32_t struct_id, uint32_t member, uint32_t *out)
{
    size_t i = 5;
    while (i < m->n_words) {
        uint32_t len = m->w[i] >> 16, op = m->w[i] & 0xffff;
        if (len == 0 || i + len > m->n_words) return false;
        if (op == OP_MEMBER_DECORATE && len >= 5 && m->w[i + 1] == struct_id && m->w[i + 2] == member &&
            m->w[i + 3] == DEC_OFFSET) {
            *out = m->w[i + 4];
            return true;
        }
        i += len;
    }
    return false;
}

static bool type_size(const spv_module *m, uint32_t id, int depth, uint32_t *out)
{
    if (id >= m->bound || depth > 16) return false;
    const spv_id *d = &m->ids[id];
    const uint32_t *in = m->w + d->at;
    uint32_t sub;
    switch (d->op) {
    case OP_TYPE_BOOL: *out = 4; return true;
    case OP_TYPE_INT:
    case OP_TYPE_FLOAT: *out = in[2] / 8; return true;
    case OP_TYPE_VECTOR:
    case OP_TYPE_MATRIX:
        if (!type_size(m, in[2], depth + 1, &sub)) return false;
        *out = sub * in[3];
        return true;
    case OP_TYPE_ARRAY: {
        uint32_t count;
        if (!const_value(m, in[3], &count)) return false;
        if (d->array_stride > 0) sub = (uint32_t)d->array_stride;
        else if (!type_size(m, in[2], depth + 1, &sub)) return false;
        *out = sub * count;
        return true;
    }
    case OP_TYPE_STRUCT: {
        uint32_t n_members = (in[0] >> 16) - 2, end = 0;
        for (uint32_t k = 0; k < n_members; k++) {
            uint32_t off, sz;
            if (!member_offset(m, id, k, &off) || !type_size(m, in[2 + k], depth + 1, &sz)) return false;
            if (off + sz > end) end = off + sz;
        }
        *out = end;
        return true;
    }
    default: return false;
    }
}

splat_status splat__spirv_reflect(const uint32_t *code, size_t size, const uint32_t *spec, uint32_t n_spec,
                                  splat_spirv_iface *out, splat_error *err)
{
    memset(out, 0, sizeof *out);
    if (size < 20 || size % 4 || code[0] != 0x07230203u)
        return splat__fail(err, SPLAT_ERR_SHADER, "not a SPIR-V module");
    spv_module m = {.w = code, .n_words = size / 4, .bound = code[3], .spec = spec, .n_spec = n_spec};
    if (m.bound == 0 || m.bound > (1u << 22)) return splat__fail(err, SPLAT_ERR_SHADER, "SPIR-V id bound %u", m.bound);
    m.ids = splat__calloc(m.bound, sizeof *m.ids);
    if (!m.ids) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "reflecting SPIR-V: out of host memory");
    for (uint32_t i = 0; i < m.bound; i++) {
        m.ids[i].binding = m.ids[i].set = m.ids[i].spec_id = m.ids[i].array_stride = -1;
    }
    splat_status st = SPLAT_OK;
    uint32_t mode_size[3] = {1, 1, 1}, mode_size_ids[3] = {0, 0, 0};
    bool have_mode_ids = false;
    /* Pass 1: definitions and decorations. */
    for (size_t i = 5; i < m.n_words;) {
        uint32_t len = code[i] >> 16, op = code[i] & 0xffff;
        if (len == 0 || i + len > m.n_words) {
            st = splat__fail(err, SPLAT_ERR_SHADER, "truncated SPIR-V instruction at word %zu", i);
            goto done;
        }
        const uint32_t *in = code + i;
        uint32_t result = 0;
        switch (op) {
        case OP_TYPE_BOOL: case OP_TYPE_INT: case OP_TYPE_FLOAT: case OP_TYPE_VECTOR: case OP_TYPE_MATRIX:
        case OP_TYPE_ARRAY: case OP_TYPE_STRUCT: case OP_TYPE_POINTER:
            result = in[1];
            break;
        case OP_CONSTANT: case OP_SPEC_CONSTANT: case OP_SPEC_CONSTANT_COMPOSITE: case OP_CONSTANT_COMPOSITE:
        case OP_VARIABLE:
            result = len > 2 ? in[2] : 0;
            break;
        case OP_DECORATE:
            if (len >= 3 && in[1] < m.bound) {
                spv_id *d = &m.ids[in[1]];
                if (in[2] == DEC_BINDING && len >= 4) d->binding = (int32_t)in[3];
                if (in[2] == DEC_SET && len >= 4) d->set = (int32_t)in[3];
                if (in[2] == DEC_SPEC_ID && len >= 4) d->spec_id = (int32_t)in[3];
                if (in[2] == DEC_ARRAY_STRIDE && len >= 4) d->array_stride = (int32_t)in[3];
                if (in[2] == DEC_BUILTIN && len >= 4 && in[3] == BUILTIN_WORKGROUP_SIZE) d->workgroup_size = true;
            }
            break;
        case OP_EXECUTION_MODE:
            if (len >= 6 && in[2] == MODE_LOCAL_SIZE) memcpy(mode_size, in + 3, sizeof mode_size);
            break;
        case OP_EXECUTION_MODE_ID:
            if (len >= 6 && in[2] == MODE_LOCAL_SIZE_ID) {
                memcpy(mode_size_ids, in + 3, sizeof mode_size_ids);
                have_mode_ids = true;
            }
            break;
        default: break;
        }
        if (result && result < m.bound) {
            m.ids[result].op = (uint16_t)op;
            m.ids[result].at = (uint32_t)i;
        }
        i += len;
    }
    /* Pass 2: interface variables and the workgroup size. */
    uint64_t seen = 0;
    memcpy(out->local_size, mode_size, sizeof mode_size);
    for (uint32_t id = 1; id < m.bound; id++) {
        spv_id *d = &m.ids[id];
        if (d->op == OP_VARIABLE) {
            uint32_t sc = code[d->at + 3], ptr = code[d->at + 1];
            if (sc == SC_STORAGE_BUFFER || sc == SC_UNIFORM) {
                if (d->set != 0) out->other_sets++;
                else if (d->binding >= 0 && d->binding < 64) {
                    if (!(seen & (1ull << d->binding))) out->n_bindings++;
                    seen |= 1ull << d->binding;
                    if ((uint32_t)d->binding + 1 > out->max_binding) out->max_binding = (uint32_t)d->binding + 1;
                }
            } else if (sc == SC_PUSH_CONSTANT && ptr < m.bound && m.ids[ptr].op == OP_TYPE_POINTER) {
                uint32_t pointee = code[m.ids[ptr].at + 3];
                if (!type_size(&m, pointee, 0, &out->push_size)) {
                    st = splat__fail(err, SPLAT_ERR_SHADER, "cannot size the push-constant block");
                    goto done;
                }
            }
        } else if (d->workgroup_size && d->op == OP_SPEC_CONSTANT_COMPOSITE) {
            for (int k = 0; k < 3; k++)
                if (!const_value(&m, code[d->at + 3 + k], &out->local_size[k])) {
                    st = splat__fail(err, SPLAT_ERR_SHADER, "cannot resolve the workgroup size");
                    goto done;
                }
        }
    }
    if (have_mode_ids)
        for (int k = 0; k < 3; k++) const_value(&m, mode_size_ids[k], &out->local_size[k]);
done:
    splat__free(m.ids);
    return st;
}

/* ------------------------------------------------------------------ pipelines */

splat_status splat__pipe_init(splat_gpu *g, splat_pipe *p, const splat_pipe_desc *desc, splat_error *err)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", desc->shader);
    SPLAT_ASSERT(desc->push_size % 4 == 0 && desc->n_bindings <= 32);
    const splat__spirv *spv = splat__spirv_find(desc->table, desc->shader);
    if (!spv) return splat__fail(err, SPLAT_ERR_SHADER, "shader '%s' is not embedded in this build", desc->shader);
    splat_spirv_iface iface;
    splat_error rerr = {0};
    if (splat__spirv_reflect(spv->code, spv->size, desc->spec, desc->n_spec, &iface, &rerr) != SPLAT_OK)
        return splat__fail(err, rerr.status, "shader '%s': %s", desc->shader, rerr.msg);
    if (iface.n_bindings != desc->n_bindings || iface.max_binding != desc->n_bindings || iface.other_sets)
        return splat__fail(err, SPLAT_ERR_SHADER,
                           "shader '%s' declares %u storage buffer bindings (highest %u, %u outside set 0) but the code "
                           "binds %u (0..%u)",
                           desc->shader, iface.n_bindings, iface.max_binding ? iface.max_binding - 1 : 0,
                           iface.other_sets, desc->n_bindings, desc->n_bindings ? desc->n_bindings - 1 : 0);
    if (iface.push_size != desc->push_size)
        return splat__fail(err, SPLAT_ERR_SHADER, "shader '%s' has a %u-byte push-constant block but the code passes %u bytes",
                           desc->shader, iface.push_size, desc->push_size);
    if (desc->push_size > g->info.max_push_constants)
        return splat__fail(err, SPLAT_ERR_LIMIT, "shader '%s': %u bytes of push constants, %s allows %u", desc->shader,
                           desc->push_size, g->info.name, g->info.max_push_constants);
    uint32_t invocations = iface.local_size[0] * iface.local_size[1] * iface.local_size[2];
    if (invocations == 0 || invocations > g->info.max_group_invocations)
        return splat__fail(err, SPLAT_ERR_LIMIT, "shader '%s': workgroup of %u invocations, %s allows %u", desc->shader,
                           invocations, g->info.name, g->info.max_group_invocations);
    memcpy(p->local_size, iface.local_size, sizeof p->local_size);
    p->n_bindings = desc->n_bindings;
    p->push_size = desc->push_size;

    VkDescriptorSetLayoutBinding bindings[32];
    for (uint32_t i = 0; i < desc->n_bindings; i++)
        bindings[i] = (VkDescriptorSetLayoutBinding){
            .binding = i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    VkDescriptorSetLayoutCreateInfo dl = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
        .bindingCount = desc->n_bindings,
        .pBindings = bindings,
    };
    VkShaderModule module = VK_NULL_HANDLE;
    VkResult r = vkCreateDescriptorSetLayout(g->device, &dl, NULL, &p->set_layout);
    if (r != VK_SUCCESS) goto vk_fail;
    VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = desc->push_size};
    VkPipelineLayoutCreateInfo pl = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &p->set_layout,
        .pushConstantRangeCount = desc->push_size ? 1 : 0,
        .pPushConstantRanges = &range,
    };
    r = vkCreatePipelineLayout(g->device, &pl, NULL, &p->layout);
    if (r != VK_SUCCESS) goto vk_fail;
    VkShaderModuleCreateInfo smi = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = spv->size,
        .pCode = spv->code,
    };
    r = vkCreateShaderModule(g->device, &smi, NULL, &module);
    if (r != VK_SUCCESS) goto vk_fail;
    VkSpecializationMapEntry entries[16];
    SPLAT_ASSERT(desc->n_spec <= 16);
    for (uint32_t i = 0; i < desc->n_spec; i++) entries[i] = (VkSpecializationMapEntry){i, i * 4, 4};
    VkSpecializationInfo si = {
        .mapEntryCount = desc->n_spec,
        .pMapEntries = entries,
        .dataSize = desc->n_spec * 4,
        .pData = desc->spec,
    };
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
            .stage = VK_SHADER_STAGE_COMPUTE_BIT,
            .module = module,
            .pName = "main",
            .pSpecializationInfo = desc->n_spec ? &si : NULL,
        },
        .layout = p->layout,
    };
    r = vkCreateComputePipelines(g->device, VK_NULL_HANDLE, 1, &ci, NULL, &p->pipeline);
    vkDestroyShaderModule(g->device, module, NULL);
    if (r != VK_SUCCESS) goto vk_fail;
    return SPLAT_OK;
vk_fail:
    splat__pipe_free(g, p);
    return splat__vk_fail(err, r, "creating pipeline '%s'", desc->shader);
}

void splat__pipe_free(splat_gpu *g, splat_pipe *p)
{
    if (!p || !g) return;
    if (p->pipeline) vkDestroyPipeline(g->device, p->pipeline, NULL);
    if (p->layout) vkDestroyPipelineLayout(g->device, p->layout, NULL);
    if (p->set_layout) vkDestroyDescriptorSetLayout(g->device, p->set_layout, NULL);
    memset(p, 0, sizeof *p);
}
