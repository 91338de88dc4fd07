// Notification channels (Slack, Teams, webhooks, ...) and their delivery log.
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import {
  createChannel,
  deleteChannel,
  fetchChannels,
  fetchDeliveries,
  sendTestMessage,
  updateChannel,
} from './client';
import type { ChannelSave, ChannelUpdate } from './types';

export const channelKeys = {
  all: () => ['channels'] as const,
  deliveries: (channelId: number) => ['channels', channelId, 'deliveries'] as const,
};

export function channelsOptions() {
  return queryOptions({
    queryKey: channelKeys.all(),
    queryFn: ({ signal }) => fetchChannels(signal),
  });
}

export function deliveriesOptions(channelId: number) {
  return queryOptions({
    queryKey: channelKeys.deliveries(channelId),
    queryFn: ({ signal }) => fetchDeliveries(channelId, signal),
  });
}

/** A new channel (no id) or the changes to one. */
export type ChannelSaveRequest =
  { id?: undefined; body: ChannelSave } | { id: number; body: ChannelUpdate };

/** Adds or changes a channel; `onSaved` runs once the list has been refetched. */
export function useSaveChannel(onSaved?: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (save: ChannelSaveRequest) =>
      save.id === undefined ? createChannel(save.body) : updateChannel(save.id, save.body),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: channelKeys.all() });
      onSaved?.();
    },
  });
}

/** Sends a test message; `onSent` runs before the channel's deliveries are refetched. */
export function useSendTestMessage(channelId: number, onSent?: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => sendTestMessage(channelId),
    onSuccess: () => {
      onSent?.();
      return queryClient.invalidateQueries({ queryKey: channelKeys.deliveries(channelId) });
    },
  });
}

export function useDeleteChannel(channelId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => deleteChannel(channelId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: channelKeys.all() }),
  });
}
