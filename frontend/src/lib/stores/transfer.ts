// Export and import of the whole store.
import { writable } from 'svelte/store';
import { api } from '../api/client';
import type { ImportReport } from '../api/models';
import { reportError, toast } from './toasts';

export function createTransfer() {
  const importing = writable(false);
  const report = writable<ImportReport | null>(null);
  async function importFile(f: Blob) {
    importing.set(true);
    report.set(null);
    try {
      const r = await api.importFile(f);
      report.set(r);
      toast('success', `Imported ${r.imported} of ${r.total} memories`);
      return r;
    } catch (e) {
      reportError(e, 'Import');
      return null;
    } finally {
      importing.set(false);
    }
  }
  return { importing, report, importFile };
}

export const transfer = createTransfer();
