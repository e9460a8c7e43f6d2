/*
 * ts_energy.c - energy drawn and CO2e emitted by a run.
 *
 * energy (Wh)   = GPU-hours * (board power + host share per GPU, W) * PUE
 * emissions (t) = energy / 1000 * grid intensity (kg CO2e / kWh) / 1000
 *
 * The method of the Llama model cards (meta-llama/llama@0e3444b
 * MODEL_CARD.md: "peak power capacity per GPU device ... adjusted for
 * power usage efficiency"), whose numbers PUE 1.1 and 0.385 kg/kWh
 * reproduce: the values Touvron et al. 2023 (LLaMA, section 6) give for
 * that method, after Wu et al. 2022.  Luccioni et al. 2022 (BLOOM)
 * count the same GPU term ("dynamic power") with PUE 1 and the French
 * grid's 57 g/kWh.  The GPU time is what the run holds its GPUs for:
 * with failures (ts_goodput.c), as the cards' "total GPU time".  See
 * docs/formulas.md, "Energy and carbon".
 */
#include "ts_internal.h"

#include <math.h>

void ts_energy_of(double gpu_hours, double gpu_watts, double host_watts, double pue,
                  double grid_kg_per_kwh, double gpus, ts_energy *out)
{
    double wh;

    *out = (ts_energy){ 0 };
    out->gpu_hours = gpu_hours;
    out->gpu_watts = gpu_watts;
    out->host_watts = host_watts;
    out->pue = pue;
    out->grid_kg_per_kwh = grid_kg_per_kwh;
    out->facility_w = gpus * (gpu_watts + host_watts) * pue;
    wh = gpu_hours * (gpu_watts + host_watts) * pue;
    ts_term_set(
        &out->energy_wh, wh, "gpu_hours * (gpu_watts + host_watts_per_gpu) * pue",
        host_watts > 0
            ? "GPUs at their board power the whole time held, plus the host share; PUE for cooling "
              "and power delivery"
            : "GPUs at their board power the whole time held (the model cards' convention); "
              "hosts, network and storage not counted (host_watts_per_gpu adds them)");
    ts_term_set(&out->co2e_t, wh / 1000.0 * grid_kg_per_kwh / 1000.0,
                "energy_wh / 1000 * grid_kg_per_kwh / 1000",
                "location-based: the grid's average intensity; embodied emissions of the hardware "
                "not counted");
}

ts_status ts_energy_eval(const ts_run *r, double gpu_hours, ts_energy *out, ts_error *err)
{
    double w = r->gpu_watts > 0 ? r->gpu_watts : r->gpu.board_watts;

    ts_energy_of(gpu_hours, w, r->host_watts_per_gpu, r->pue, r->grid_kg_per_kwh, (double)r->gpus,
                 out);
    out->power_source = r->gpu_watts > 0              ? "gpu_watts (the request's)"
                        : r->gpu.power_source != NULL ? r->gpu.power_source
                                                      : "the GPU catalogue";
    if (!isfinite(out->energy_wh.value) || !isfinite(out->co2e_t.value) ||
        !isfinite(out->facility_w)) {
        *out = (ts_energy){ 0 };
        return ts_error_set(err, TS_ERANGE, "tokens",
                            "the energy figures overflow for these inputs");
    }
    return TS_OK;
}
