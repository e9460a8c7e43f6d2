/*
 * test_name.c - names as people type them (core/ts_name.c) and the GPU and
 * preset lookups built on them.  Distances are worked by hand: OSA distance
 * counts insertions, deletions, substitutions and adjacent transpositions.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

START_TEST(key_folds_case_and_punctuation)
{
    char k[TS_NAME_KEY_MAX];

    ck_assert_uint_eq(ts_name_key("H100 SXM", k, sizeof k), 7);
    ck_assert_str_eq(k, "h100sxm");
    ck_assert_uint_eq(ts_name_key("meta-llama/Meta-Llama-3-8B", k, sizeof k), 21);
    ck_assert_str_eq(k, "metallamametallama38b");
    /* '.' is kept: llama3.1-8b and llama3-18b are different models */
    ts_name_key("Llama3.1-8B", k, sizeof k);
    ck_assert_str_eq(k, "llama3.18b");
    ck_assert_uint_eq(ts_name_key("", k, sizeof k), 0);
    ck_assert_uint_eq(ts_name_key("--/", k, sizeof k), 0);
    /* too long for the key: refused rather than compared by a prefix */
    ck_assert_uint_eq(ts_name_key("abcdefgh", k, 4), 0);
    ck_assert_int_eq(ts_name_same("h100_sxm", "H100-SXM"), 1);
    ck_assert_int_eq(ts_name_same("h100", "h100-sxm"), 0);
}
END_TEST

START_TEST(distance_by_hand)
{
    ck_assert_uint_eq(ts_name_distance("", ""), 0);
    ck_assert_uint_eq(ts_name_distance("abc", ""), 3);
    ck_assert_uint_eq(ts_name_distance("lama38b", "llama38b"), 1);  /* insert l */
    ck_assert_uint_eq(ts_name_distance("h900", "h200"), 1);         /* substitute */
    ck_assert_uint_eq(ts_name_distance("lalma38b", "llama38b"), 1); /* transpose */
    ck_assert_uint_eq(ts_name_distance("kitten", "sitting"), 3);    /* Levenshtein's example */
    ck_assert_uint_eq(ts_name_distance("ca", "abc"), 3);            /* OSA, not Damerau (2) */
}
END_TEST

START_TEST(gpu_names_as_typed)
{
    ck_assert_str_eq(ts_gpu_find("H100")->id, "h100-sxm");
    ck_assert_str_eq(ts_gpu_find("h100")->id, "h100-sxm");
    ck_assert_str_eq(ts_gpu_find("NVIDIA H100 80GB HBM3")->id, "h100-sxm");
    ck_assert_str_eq(ts_gpu_find("NVIDIA A100-SXM4-80GB")->id, "a100-80");
    ck_assert_str_eq(ts_gpu_find("A100-40GB")->id, "a100-40");
    ck_assert_str_eq(ts_gpu_find("Tesla V100-SXM2-16GB")->id, "v100-16");
    ck_assert_str_eq(ts_gpu_find("AMD Instinct MI300X")->id, "mi300x");
    ck_assert_str_eq(ts_gpu_find("H200")->id, "h200");
    /* nvidia-smi's product names of the cards people fine-tune on, and of
     * the export and NVL parts (as pasted in public nvidia-smi outputs). */
    ck_assert_str_eq(ts_gpu_find("NVIDIA GeForce RTX 4090")->id, "rtx-4090");
    ck_assert_str_eq(ts_gpu_find("NVIDIA GeForce RTX 3090")->id, "rtx-3090");
    ck_assert_str_eq(ts_gpu_find("RTX 4090")->id, "rtx-4090");
    ck_assert_str_eq(ts_gpu_find("NVIDIA RTX A6000")->id, "rtx-a6000");
    ck_assert_str_eq(ts_gpu_find("NVIDIA A10G")->id, "a10g");
    ck_assert_str_eq(ts_gpu_find("NVIDIA A10")->id, "a10");
    ck_assert_str_eq(ts_gpu_find("NVIDIA L4")->id, "l4");
    ck_assert_str_eq(ts_gpu_find("L4 24GB")->id, "l4");
    ck_assert_str_eq(ts_gpu_find("Tesla T4")->id, "t4");
    ck_assert_str_eq(ts_gpu_find("NVIDIA L40")->id, "l40");
    ck_assert_str_eq(ts_gpu_find("NVIDIA L40S")->id, "l40s");
    ck_assert_str_eq(ts_gpu_find("NVIDIA H800")->id, "h800");
    ck_assert_str_eq(ts_gpu_find("NVIDIA A800-SXM4-80GB")->id, "a800-80");
    ck_assert_str_eq(ts_gpu_find("NVIDIA H200 NVL")->id, "h200-nvl");
    ck_assert_str_eq(ts_gpu_find("NVIDIA GH200 480GB")->id, "gh200");
    /* torch.cuda.get_device_name() on B300 (NVIDIA/cosmos-framework#114). */
    ck_assert_str_eq(ts_gpu_find("NVIDIA B300 SXM6 AC")->id, "b300");
    ck_assert_str_eq(ts_gpu_find("B300")->id, "b300");
    ck_assert_str_eq(ts_gpu_find("NVIDIA GB300")->id, "gb300");
    /* nvidia-smi / rocm-smi product names of the PCIe and CDNA 4 parts. */
    ck_assert_str_eq(ts_gpu_find("NVIDIA A100 80GB PCIe")->id, "a100-pcie-80");
    ck_assert_str_eq(ts_gpu_find("A100 PCIe")->id, "a100-pcie-80");
    ck_assert_str_eq(ts_gpu_find("NVIDIA A30")->id, "a30");
    ck_assert_str_eq(ts_gpu_find("NVIDIA RTX PRO 6000 Blackwell Server Edition")->id,
                     "rtx-pro-6000");
    ck_assert_str_eq(ts_gpu_find("RTX PRO 6000")->id, "rtx-pro-6000");
    ck_assert_str_eq(ts_gpu_find("AMD Instinct MI355X")->id, "mi355x");
    ck_assert_ptr_null(ts_gpu_find("geforce"));
    ck_assert_ptr_null(ts_gpu_find("nvidia"));
    ck_assert_ptr_null(ts_gpu_find("tpu-v5p"));
    ck_assert_ptr_null(ts_gpu_find(NULL));
    /* every alias names a GPU of the catalogue */
    for (size_t i = 0; i < ts_gpu_count(); i++) {
        const char *a;

        for (size_t k = 0; (a = ts_gpu_alias(ts_gpu_at(i)->id, k)) != NULL; k++)
            ck_assert_ptr_eq(ts_gpu_find(a), ts_gpu_at(i));
    }
    ck_assert_str_eq(ts_gpu_suggest("h10"), "h100-sxm");
    ck_assert_str_eq(ts_gpu_suggest("h900"), "h200");
    ck_assert_ptr_null(ts_gpu_suggest("tpu-v5p"));
}
END_TEST

START_TEST(preset_names_as_typed)
{
    ck_assert_str_eq(ts_preset_find("meta-llama/Meta-Llama-3-8B")->id, "llama3-8b");
    ck_assert_str_eq(ts_preset_find("Meta-Llama-3-8B-Instruct")->id, "llama3-8b");
    ck_assert_str_eq(ts_preset_find("LLAMA3-70B")->id, "llama3-70b");
    ck_assert_str_eq(ts_preset_find("mistralai/Mixtral-8x7B-v0.1")->id, "mixtral-8x7b");
    ck_assert_ptr_null(ts_preset_find("meta-llama/Meta-Llama-3-9B"));
    for (size_t i = 0; i < ts_preset_count(); i++) {
        const char *a;

        for (size_t k = 0; (a = ts_preset_alias(ts_preset_at(i)->id, k)) != NULL; k++)
            ck_assert_ptr_eq(ts_preset_find(a), ts_preset_at(i));
    }
    ck_assert_str_eq(ts_preset_suggest("lama3-8b"), "llama3-8b");
    ck_assert_str_eq(ts_preset_suggest("llama3-07b"), "llama3-70b");
    ck_assert_ptr_null(ts_preset_suggest("gpt-5"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("name");
    TCase *tc = tcase_create("name");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, key_folds_case_and_punctuation);
    tcase_add_test(tc, distance_by_hand);
    tcase_add_test(tc, gpu_names_as_typed);
    tcase_add_test(tc, preset_names_as_typed);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
