import type { DataConverter, LoadedDataConverter } from '@temporalio/common';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { switchyardDataConverter } from '../../src/temporal/data-converter';
import { testKeyring } from './payload-keys';

/** What a test's own Client needs to read and write what the run's processes do. */
export const testDataConverter = (): DataConverter => switchyardDataConverter(testKeyring());

/** The same, loaded: what `client.options.loadedDataConverter` is, for reading a recorded history. */
export const testLoadedDataConverter = (): LoadedDataConverter => loadDataConverter(testDataConverter());
