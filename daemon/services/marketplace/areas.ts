// The areas the marketplace server is made of, in registration order. One line per area.
import type { OpenArea } from './area.js';
import { openLicenseArea } from './license/index.js';
import { openNotesArea } from './notes/index.js';
import { openSyncArea } from './sync/index.js';

export const AREAS: OpenArea[] = [openNotesArea, openLicenseArea, openSyncArea];
