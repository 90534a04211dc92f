import type { PlannerLogger } from './log.js';

/**
 * Telling a person that a task needs them. Email (SES) is implemented with
 * the approval mails; here is the log implementation, which is also what a
 * CloudWatch alarm or a log subscription picks up.
 */

export interface TaskNotification {
  taskId: string;
  status: 'waiting_confirm' | 'failed';
  subject: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface Notifier {
  notify(notification: TaskNotification): Promise<void>;
}

export class LogNotifier implements Notifier {
  constructor(private readonly logger: PlannerLogger) {}

  async notify(notification: TaskNotification): Promise<void> {
    this.logger.log('planner.notify', { ...notification });
  }
}
