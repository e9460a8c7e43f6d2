/*
 * units.js - memory in GiB or GB (issue 27): the user picks binary GiB
 * (2^30 bytes, as the API writes its texts and as nvidia-smi's MiB add
 * up) or decimal GB (10^9 bytes, as GPU data sheets and disk vendors
 * write them).  Every byte figure on the page follows: the page writes
 * them from the answer's byte numbers (format.js textOf, fmtBytes), so
 * the API is not asked again and its answers do not change.  The choice
 * lives in the link (units=GB; GiB, the default, adds nothing).
 */
import { $ } from './dom.js';
import { byteUnitsOf, setByteUnits } from './format.js';

/* "units=GB" picks decimal; anything else is the default, GiB. */
export function unitsFromQuery(search) {
    setByteUnits(new URLSearchParams(search).get('units'));
}

/* The link's part for the choice ('' for the default). */
export function unitsQuery() {
    return byteUnitsOf() === 'GB' ? 'units=GB' : '';
}

/* The control; redraw() re-lays the page out in the new units. */
export function buildUnits(redraw) {
    const sel = $('#units');
    sel.value = byteUnitsOf();
    sel.addEventListener('change', () => {
        setByteUnits(sel.value);
        redraw();
    });
}
